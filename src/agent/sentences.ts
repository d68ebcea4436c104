// Cuts a reply streaming in as tokens into sentences, so speech starts with the first sentence instead of waiting for
// the whole reply. A sentence ends at . ! ? (or their CJK forms) followed by a space, or at a line break; a very
// long run without one is cut at a comma or space so the first audio never waits on a run-on sentence. The reply's
// first piece goes sooner: it ends at its first clause (a comma, semicolon, colon or dash followed by a space) when
// no sentence has ended yet, so "Sure, I can help with that." starts speaking at "Sure," instead of waiting for the
// rest (every later piece is a whole sentence, which a voice says most naturally).
const END = /[.!?。！？]["')\]]*\s|\n/g;
const CLAUSE = /[,;:，；：]["')\]]*\s|\s[—–]\s/g;
/** Characters after which a sentence is cut at the last comma or space even without an end mark. */
export const MAX_SENTENCE_CHARS = 240;

export class SentenceSplitter {
  private buffer = "";
  private first = true;

  /** Adds a piece of text; returns the sentences it completed. */
  push(piece: string): string[] {
    this.buffer += piece;
    const out: string[] = [];
    for (;;) {
      END.lastIndex = 0;
      const m = END.exec(this.buffer);
      let cut = m ? m.index + m[0].length : -1;
      if (cut < 0 && this.first) {
        CLAUSE.lastIndex = 0;
        const c = CLAUSE.exec(this.buffer);
        // Not when the sentence's end is already there (a reply that came in one piece is said whole).
        const after = c ? this.buffer.slice(c.index + c[0].length) : "";
        if (c && this.buffer.slice(0, c.index).trim() && !/[.!?。！？]/.test(after)) cut = c.index + c[0].length;
      }
      if (cut < 0 && this.buffer.length > MAX_SENTENCE_CHARS) {
        const head = this.buffer.slice(0, MAX_SENTENCE_CHARS);
        const at = Math.max(head.lastIndexOf(", "), head.lastIndexOf(" "));
        cut = at > 0 ? at + 1 : MAX_SENTENCE_CHARS;
      }
      if (cut < 0) return out;
      const sentence = this.buffer.slice(0, cut).trim();
      this.buffer = this.buffer.slice(cut);
      if (sentence) out.push(sentence);
      this.first = false;
    }
  }

  /** The rest, at the end of the reply. */
  flush(): string | null {
    const rest = this.buffer.trim();
    this.buffer = "";
    return rest || null;
  }
}
