// G.711 μ-law and A-law, the telephone codecs every carrier streams: 8-bit codes for 16-bit linear samples.
// Both directions go through tables built once per isolate (256 entries to decode, 65,536 to encode), so the
// per-sample work in the media path is one array read and nothing is allocated per sample.

const MULAW_BIAS = 0x84;
const MULAW_CLIP = 8159; // 14-bit magnitude before the bias
const MULAW_SEGMENT_ENDS = [0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff, 0x1fff];
const ALAW_SEGMENT_ENDS = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff];

function segment(value: number, ends: number[]): number {
  let seg = 0;
  while (seg < ends.length && value > ends[seg]) seg++;
  return seg;
}

function mulawOf(sample: number): number {
  let v = sample >> 2;
  let mask = 0xff;
  if (v < 0) {
    v = -v;
    mask = 0x7f;
  }
  v = Math.min(v, MULAW_CLIP) + (MULAW_BIAS >> 2);
  const seg = segment(v, MULAW_SEGMENT_ENDS);
  if (seg >= 8) return 0x7f ^ mask;
  return ((seg << 4) | ((v >> (seg + 1)) & 0x0f)) ^ mask;
}

function linearOfMulaw(code: number): number {
  const u = ~code & 0xff;
  const t = ((((u & 0x0f) << 3) + MULAW_BIAS) << ((u & 0x70) >> 4)) - MULAW_BIAS;
  return u & 0x80 ? -t : t;
}

function alawOf(sample: number): number {
  let v = sample >> 3;
  let mask = 0xd5;
  if (v < 0) {
    v = -v - 1;
    mask = 0x55;
  }
  const seg = segment(v, ALAW_SEGMENT_ENDS);
  if (seg >= 8) return 0x7f ^ mask;
  const mantissa = seg < 2 ? (v >> 1) & 0x0f : (v >> seg) & 0x0f;
  return ((seg << 4) | mantissa) ^ mask;
}

function linearOfAlaw(code: number): number {
  const a = code ^ 0x55;
  const seg = (a & 0x70) >> 4;
  let t = (a & 0x0f) << 4;
  if (seg === 0) t += 8;
  else t = (t + 0x108) << (seg - 1);
  return a & 0x80 ? t : -t;
}

function decodeTable(of: (code: number) => number): Int16Array {
  const table = new Int16Array(256);
  for (let c = 0; c < 256; c++) table[c] = of(c);
  return table;
}

function encodeTable(of: (sample: number) => number): Uint8Array {
  const table = new Uint8Array(65536);
  for (let s = -32768; s < 32768; s++) table[s & 0xffff] = of(s);
  return table;
}

export type G711 = "mulaw" | "alaw";

let tables: Record<G711, { decode: Int16Array; encode: Uint8Array }> | null = null;
function tablesOf(law: G711) {
  tables ??= {
    mulaw: { decode: decodeTable(linearOfMulaw), encode: encodeTable(mulawOf) },
    alaw: { decode: decodeTable(linearOfAlaw), encode: encodeTable(alawOf) },
  };
  return tables[law];
}

/** Decodes 8-bit codes into `out` (at least as long as `codes`); returns the samples written. */
export function g711Decode(law: G711, codes: Uint8Array, out: Int16Array = new Int16Array(codes.length)): Int16Array {
  const table = tablesOf(law).decode;
  for (let i = 0; i < codes.length; i++) out[i] = table[codes[i]];
  return out.length === codes.length ? out : out.subarray(0, codes.length);
}

/** Encodes 16-bit samples into 8-bit codes in `out` (at least as long as `samples`). */
export function g711Encode(law: G711, samples: Int16Array, out: Uint8Array = new Uint8Array(samples.length)): Uint8Array {
  const table = tablesOf(law).encode;
  for (let i = 0; i < samples.length; i++) out[i] = table[samples[i] & 0xffff];
  return out.length === samples.length ? out : out.subarray(0, samples.length);
}

/** The code of digital silence: what a frame with nothing to say is filled with. */
export const G711_SILENCE: Record<G711, number> = { mulaw: 0xff, alaw: 0xd5 };
