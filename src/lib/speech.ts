// Fitting a greeting to a carrier's text-to-speech limit: one utterance (a <Say>, a talk action, a speak command)
// takes at most the carrier's `maxSpeakChars`, so longer text is cut into several, at sentence boundaries where it
// can be, else between words, else (one enormous word) anywhere between two characters.

const utf8 = new TextEncoder();

/**
 * The length limits are applied to UTF-8 bytes, which are never fewer than characters: the limit then holds
 * whether a carrier counts characters or bytes (Twilio's own wording is "UTF-8 single byte characters").
 */
export const speechLength = (text: string): number => utf8.encode(text).length;

// Made on first use, not at the isolate's start: each loads ICU's break rules (tens of milliseconds), and most
// isolates never cut a greeting.
let segmenters: { sentences: Intl.Segmenter; words: Intl.Segmenter } | null = null;
const segmenter = () =>
  (segmenters ??= { sentences: new Intl.Segmenter("en", { granularity: "sentence" }), words: new Intl.Segmenter("en", { granularity: "word" }) });

/** Pieces of `text`, each at most `max` long, in order; concatenated they give `text` back. */
function* pieces(text: string, max: number): Generator<string> {
  const { sentences, words } = segmenter();
  for (const { segment: sentence } of sentences.segment(text)) {
    if (speechLength(sentence) <= max) {
      yield sentence;
      continue;
    }
    for (const { segment: word } of words.segment(sentence)) {
      if (speechLength(word) <= max) {
        yield word;
        continue;
      }
      // A single "word" longer than an utterance: cut between code points (never inside a surrogate pair).
      let part = "";
      for (const ch of word) {
        if (speechLength(part + ch) > max) {
          yield part;
          part = "";
        }
        part += ch;
      }
      if (part) yield part;
    }
  }
}

/**
 * `text` as the utterances a carrier speaks one after another, each at most `max` long (see speechLength) and
 * trimmed. Empty or blank text gives no utterance at all (the answer document then just hangs up).
 */
export function speechChunks(text: string, max: number): string[] {
  const whole = text.trim();
  if (!whole) return [];
  if (speechLength(whole) <= max) return [whole];
  const out: string[] = [];
  let current = "";
  const flush = () => {
    const t = current.trim();
    if (t) out.push(t);
    current = "";
  };
  for (const piece of pieces(whole, max)) {
    if (speechLength(current + piece) > max) flush();
    current += piece;
  }
  flush();
  return out;
}
