// What the callee heard of a sentence cut off by a barge-in, down to the word: the words whose audio had played in
// full when it stopped. With the voice's word timings where the engine gives them; otherwise each word's end is taken
// as proportional to the characters spoken so far (speech runs at a near-even rate of characters within a sentence).
// Pure.

/** A word of synthesized speech and when it ends, in ms from the start of its sentence's audio. */
export type WordTime = { word: string; endMs: number };

/** The words of `text` heard when `playedMs` of its `durationMs` of audio had played. */
export function heardWords(text: string, playedMs: number, durationMs: number, timings?: WordTime[] | null): string {
  const words = text.trim().split(/\s+/).filter(Boolean);
  if (!words.length || playedMs <= 0) return "";
  if (playedMs >= durationMs) return words.join(" ");
  if (timings?.length) {
    const n = timings.filter((w) => w.endMs <= playedMs).length;
    // The engine's words may be spelled differently (no punctuation): counted against the text's own words.
    return words.slice(0, timings.length === words.length ? n : Math.round((n / timings.length) * words.length)).join(" ");
  }
  const total = words.reduce((n, w) => n + w.length + 1, -1);
  let spoken = -1;
  let n = 0;
  for (const w of words) {
    spoken += w.length + 1;
    if ((spoken / total) * durationMs > playedMs) break;
    n++;
  }
  return words.slice(0, n).join(" ");
}

/** Where to go on from after a pause at `playedMs`: the start of the first word not heard in full (ms into the audio). */
export function resumeAtMs(text: string, playedMs: number, durationMs: number, timings?: WordTime[] | null): number {
  const heard = heardWords(text, playedMs, durationMs, timings);
  if (!heard) return 0;
  const n = heard.split(" ").length;
  if (timings?.length) return Math.min(durationMs, timings[Math.min(n, timings.length) - 1].endMs);
  const total = text.trim().replace(/\s+/g, " ").length;
  return Math.min(durationMs, ((heard.length + 1) / total) * durationMs);
}
