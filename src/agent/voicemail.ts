// Answering-machine detection from the callee's first utterance alone (the words of amd/keywords.ts, or a greeting
// far longer than a person answering the phone says), where the agent's own detection on the audio did not decide.
import { MACHINE_WORDS } from "./amd/keywords";

export { type KeywordClass, keywordClass } from "./amd/keywords";

/** A person answering says a few words; a machine's greeting is typically past five seconds of speech. */
export const MACHINE_SPEECH_MS = 5500;

export function soundsLikeMachine(text: string, voicedMs: number): boolean {
  return MACHINE_WORDS.test(text) || voicedMs >= MACHINE_SPEECH_MS;
}
