// UTF-8 decoding of a byte stream in chunks, strict: invalid bytes are reported with their offset (so the CSV
// reader can name the row), never replaced. A leading BOM is dropped; a U+FEFF anywhere else is kept as data.

/** Offset of the first byte that does not start or continue a valid UTF-8 sequence, or -1 when all are valid.
 *  A sequence cut short by the end of `bytes` counts as invalid (callers pass only complete text). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    let len: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) (len = 2), (min = 0x80);
    else if (b >= 0xe0 && b <= 0xef) (len = 3), (min = 0x800);
    else if (b >= 0xf0 && b <= 0xf4) (len = 4), (min = 0x10000);
    else return i; // a continuation byte out of place, an overlong lead (C0, C1) or F5..FF
    if (i + len > n) return i;
    let cp = b & (0xff >> (len + 1));
    for (let k = 1; k < len; k++) {
      const c = bytes[i + k];
      if ((c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return -1;
}

/** Length of the prefix of `bytes` that ends on a sequence boundary (the rest may be completed by the next chunk). */
export function completePrefixLength(bytes: Uint8Array): number {
  const n = bytes.length;
  // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
  for (let back = 1; back <= Math.min(3, n); back++) {
    const b = bytes[n - back];
    if ((b & 0xc0) === 0x80) continue; // continuation: keep looking for its lead
    const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return len > back ? n - back : n;
  }
  return n;
}

export type Decoded = { text: string } | { text: string; invalidAt: number /* byte offset in the stream */ };

/** Strict chunked decoder: `push` returns the text of complete sequences, or the valid text before an invalid byte. */
export class Utf8Chunks {
  private carry: Uint8Array = new Uint8Array(0);
  private offset = 0; // stream offset of carry[0]
  private first = true;
  private textStart = 0;
  private readonly decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

  /** Decodes a stream that starts at byte `offset` of the file (a BOM is only looked for at 0). */
  constructor(offset = 0) {
    this.offset = offset;
    this.first = offset === 0;
  }

  /** File offset of the first byte of the text the last `push` returned. */
  get lastTextStart(): number {
    return this.textStart;
  }

  push(chunk: Uint8Array, final = false): Decoded {
    let data = chunk;
    if (this.carry.length) {
      data = new Uint8Array(this.carry.length + chunk.length);
      data.set(this.carry);
      data.set(chunk, this.carry.length);
    }
    let start = 0;
    if (this.first) {
      if (data.length < 3 && !final) {
        // Too short to tell whether it starts with a BOM: wait for more.
        this.carry = data;
        return { text: "" };
      }
      this.first = false;
      if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) start = 3;
    }
    const cut = final ? data.length : Math.max(start, completePrefixLength(data));
    const body = data.subarray(start, cut);
    const base = this.offset + start;
    this.textStart = base;
    this.carry = data.slice(cut);
    this.offset += cut;
    try {
      return { text: this.decoder.decode(body) };
    } catch {
      const at = firstInvalidUtf8(body);
      const bad = at < 0 ? body.length : at;
      return { text: this.decoder.decode(body.subarray(0, bad)), invalidAt: base + bad };
    }
  }
}

/** Bytes `text` takes in UTF-8 (a surrogate pair is one 4-byte character). */
export function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) n += c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 1 : 2;
  }
  return n;
}
