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
