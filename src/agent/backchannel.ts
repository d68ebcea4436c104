// Whether what the callee said over the agent was a backchannel (a listener's "uh-huh", "yeah", "okay", or no words
// at all: a cough, line noise) rather than an interruption. A backchannel lets the agent go on with its sentence, as
// a person would; anything else is the callee taking the turn. Pure.

const BACKCHANNEL = new Set([
  "uh-huh",
  "uhhuh",
  "uh",
  "huh",
  "um",
  "umm",
  "hm",
  "hmm",
  "mm",
  "mmm",
  "mhm",
  "mm-hmm",
  "mmhmm",
  "ah",
  "oh",
  "ooh",
  "yeah",
  "yea",
  "yes",
  "yep",
  "yup",
  "ok",
  "okay",
  "right",
  "sure",
  "alright",
  "aha",
  "i",
  "see",
  "got",
  "it",
  "cool",
  "nice",
  "great",
]);

/** Up to three listener's words (or none): the agent goes on. */
export function isBackchannel(text: string): boolean {
  const words = text
    .toLowerCase()
    .replace(/[^a-z\s-]/g, " ")
    .split(/\s+/)
    .filter(Boolean);
  return words.length <= 3 && words.every((w) => BACKCHANNEL.has(w));
}

/** Voice over the agent with no words yet: how much longer than `interruptMinMs` it waits for them before stopping. */
export const WORDS_WAIT_MS = 400;

/**
 * Whether the callee's voice over the agent stops it now. Under `minMs` of voice, never. Past it, where the engine
 * gives words while they speak (`words` defined), the words decide: a backchannel ("uh-huh", "okay") does not stop
 * the agent at all, other words do; with no words yet (a cough, line noise, or words not in time), voice alone stops
 * it after WORDS_WAIT_MS more. Without such words, voice alone decides at `minMs`.
 */
export function stopsAgent(voicedMs: number, minMs: number, words: string | undefined): boolean {
  if (voicedMs < minMs) return false;
  if (words === undefined) return true;
  if (words.trim()) return !isBackchannel(words);
  return voicedMs >= minMs + WORDS_WAIT_MS;
}
