// Answering-machine detection from the callee's first utterance, where the carrier gave no verdict: a machine's
// greeting names itself ("leave a message", "after the tone", "voicemail", "not available") or runs on far longer
// than a person answering the phone does.

const MACHINE_WORDS =
  /\b(leave (me |us )?(a |your )?(message|name)|after the (tone|beep)|voice ?mail|mailbox|(is |are |am )?(not|un)available|can'?t (take|come to) (your|the) (call|phone)|record your message|at the tone)\b/i;

/** A person answering says a few words; a machine's greeting is typically past five seconds of speech. */
export const MACHINE_SPEECH_MS = 5500;

export function soundsLikeMachine(text: string, voicedMs: number): boolean {
  return MACHINE_WORDS.test(text) || voicedMs >= MACHINE_SPEECH_MS;
}
