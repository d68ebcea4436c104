// Sample-rate conversion between the rates carriers and speech engines use (8, 16 and 24 kHz). Stateful, so a
// stream converted in 20 ms pieces comes out the same as converted whole: the filter's history, the last input
// sample and the position carry over. Going down, a windowed-sinc low-pass first removes what the lower rate cannot
// hold (else it folds back into the speech band); then output samples are interpolated linearly between inputs.

export const RATES = [8000, 16000, 24000] as const;
export type SampleRate = (typeof RATES)[number];

/** Low-pass taps (Blackman-windowed sinc) with the cutoff at `cutoff` of the input rate, summing to 1. */
function lowPass(cutoff: number, taps: number): Float64Array {
  const h = new Float64Array(taps);
  const mid = (taps - 1) / 2;
  let sum = 0;
  for (let k = 0; k < taps; k++) {
    const t = k - mid;
    const sinc = t === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * t) / (Math.PI * t);
    const w = 0.42 - 0.5 * Math.cos((2 * Math.PI * k) / (taps - 1)) + 0.08 * Math.cos((4 * Math.PI * k) / (taps - 1));
    h[k] = sinc * w;
    sum += h[k];
  }
  for (let k = 0; k < taps; k++) h[k] /= sum;
  return h;
}

export class Resampler {
  private readonly h: Float64Array | null; // low-pass taps when going down
  // Positions count in 1/`to` of an input sample, so the 3:2 steps stay exact over hours of audio.
  private pos: number; // where the next output sample sits, counted from `prev`
  private prev = 0; // the last (filtered) input sample of the previous piece
  private buf = new Float64Array(0); // the filter's history (taps - 1 inputs), then this piece's inputs
  private scratch = new Float64Array(0);

  constructor(
    readonly from: SampleRate,
    readonly to: SampleRate,
  ) {
    // Cutoff a little under the new Nyquist frequency; 8 taps per unit of ratio give ~50 dB at 0.75 of the new rate.
    this.h = from > to ? lowPass((0.45 * to) / from, Math.ceil((16 * from) / to) | 1) : null;
    this.pos = to;
  }

  /** Low-passes `input` into the scratch buffer (a copy when going up). */
  private filtered(input: Int16Array): Float64Array {
    const n = input.length;
    if (this.scratch.length < n) this.scratch = new Float64Array(n);
    const x = this.scratch;
    const h = this.h;
    if (!h) {
      for (let i = 0; i < n; i++) x[i] = input[i];
      return x;
    }
    const keep = h.length - 1;
    if (this.buf.length < keep + n) {
      const grown = new Float64Array(keep + n);
      grown.set(this.buf.subarray(0, keep));
      this.buf = grown;
    }
    const b = this.buf;
    for (let i = 0; i < n; i++) b[keep + i] = input[i];
    for (let i = 0; i < n; i++) {
      let acc = 0;
      for (let k = 0; k <= keep; k++) acc += h[k] * b[i + k];
      x[i] = acc;
    }
    b.copyWithin(0, n, n + keep);
    return x;
  }

  /** Converts one piece of the stream. */
  convert(input: Int16Array): Int16Array {
    if (this.from === this.to) return input;
    const n = input.length;
    const x = this.filtered(input);
    const { from, to } = this;
    const out = new Int16Array(Math.floor((n * to + to - this.pos) / from) + 1);
    let k = 0;
    let pos = this.pos;
    // Index 0 is `prev`, index i >= 1 is x[i - 1]; an output sample interpolates between its two neighbours.
    for (; pos <= n * to; pos += from) {
      const i = Math.floor(pos / to);
      const frac = (pos - i * to) / to;
      const a = i === 0 ? this.prev : x[i - 1];
      const b = i < n ? x[i] : a;
      const v = Math.round(a + (b - a) * frac);
      out[k++] = Math.max(-32768, Math.min(32767, v));
    }
    this.pos = pos - n * to;
    if (n) this.prev = x[n - 1];
    return out.subarray(0, k);
  }
}
