// Steady tones on the callee's audio (issue 42, answering machines): a voicemail's beep, a fax machine's calling tone
// (CNG, 1100 Hz) or a modem's answer tone (2100 Hz). Each 30 ms block is scanned with Goertzel filters over 300-2200 Hz
// (a 25 Hz grid, then refined to 5 Hz around the strongest); a block is tonal when that one frequency holds most of
// its energy, and a tone is a run of tonal blocks at the same frequency. Speech spreads its energy over harmonics and
// formants and glides in pitch, so it rarely holds one frequency's share for more than a block or two; a beep does for
// 100 ms or more. No model, pure and incremental: fed the call's frames as they arrive.
import { goertzel } from "./goertzel";

export const TONE_BLOCK_MS = 30;
/** The lowest and highest frequency looked for: voicemail beeps sit at ~400-2000 Hz, fax and modem tones inside. */
const LOW_HZ = 300;
const HIGH_HZ = 2200;
const GRID_HZ = 25;
/** Quieter than this (RMS of 16-bit samples, about -47 dBFS) is no tone: line noise. */
const MIN_RMS = 150;
/** The one frequency's share of the block's energy that makes it tonal (a clean tone gives ~1, speech well under). */
export const TONE_SHARE = 0.75;
/** A tone's frequency may wander this much between blocks (a carrier's resampling, a cheap oscillator). */
const DRIFT_HZ = 30;
/** A tone is at least this long: shorter runs are a vowel's moment, not a beep. */
export const MIN_TONE_MS = 100;

export type Tone = { freqHz: number; startMs: number; endMs: number; share: number };

/** A voicemail's beep: a steady tone at ~400-2000 Hz lasting 100-1500 ms (a little slack either side). */
export const isBeep = (t: Tone) => t.freqHz >= 350 && t.freqHz <= 2050 && t.endMs - t.startMs >= MIN_TONE_MS && t.endMs - t.startMs <= 1600;

type Run = { freqHz: number; startMs: number; endMs: number; blocks: number; shareSum: number; missed: number };

/** The strongest frequency of one block and its share of the block's energy, or null when the block is quiet. */
export function blockTone(x: Int16Array, from: number, n: number, rate: number): { freqHz: number; share: number } | null {
  let energy = 0;
  for (let i = from; i < from + n; i++) energy += x[i] * x[i];
  energy /= n;
  if (energy < MIN_RMS * MIN_RMS) return null;
  let best = LOW_HZ;
  let bestP = -1;
  for (let f = LOW_HZ; f <= HIGH_HZ; f += GRID_HZ) {
    const p = goertzel(x, from, n, f, rate);
    if (p > bestP) [best, bestP] = [f, p];
  }
  for (let f = best - 10; f <= best + 10; f += 5) {
    if (f === best) continue;
    const p = goertzel(x, from, n, f, rate);
    if (p > bestP) [best, bestP] = [f, p];
  }
  return { freqHz: best, share: bestP / energy };
}

/** Finds steady tones in a stream of 16-bit linear audio; `push` returns the tones that ended within it. */
export class ToneTracker {
  private readonly n: number;
  private readonly buf: Int16Array;
  private fill = 0;
  private blockStartMs: number | null = null;
  private run: Run | null = null;

  constructor(private readonly rate: number) {
    this.n = Math.round((rate * TONE_BLOCK_MS) / 1000);
    this.buf = new Int16Array(this.n);
  }

  /** A tone under way for at least `MIN_TONE_MS` (its start, frequency and how long so far), else null. */
  get current(): Tone | null {
    const r = this.run;
    if (!r || r.endMs - r.startMs < MIN_TONE_MS) return null;
    return { freqHz: Math.round(r.freqHz), startMs: r.startMs, endMs: r.endMs, share: r.shareSum / r.blocks };
  }

  /** The frame's samples starting at `atMs` on the call's clock; the tones that ended in it, in order. */
  push(samples: Int16Array, atMs: number): Tone[] {
    const out: Tone[] = [];
    for (let i = 0; i < samples.length; ) {
      if (this.fill === 0) this.blockStartMs = atMs + (i * 1000) / this.rate;
      const take = Math.min(this.n - this.fill, samples.length - i);
      this.buf.set(samples.subarray(i, i + take), this.fill);
      this.fill += take;
      i += take;
      if (this.fill < this.n) continue;
      this.fill = 0;
      const ended = this.block(this.blockStartMs!);
      if (ended) out.push(ended);
    }
    return out;
  }

  /** The stream ended: a tone still under way ends here. */
  flush(): Tone | null {
    const t = this.current;
    this.run = null;
    return t;
  }

  private block(startMs: number): Tone | null {
    const t = blockTone(this.buf, 0, this.n, this.rate);
    const tonal = t !== null && t.share >= TONE_SHARE;
    const r = this.run;
    if (tonal && r && Math.abs(t.freqHz - r.freqHz) <= DRIFT_HZ) {
      r.freqHz = (r.freqHz * r.blocks + t.freqHz) / (r.blocks + 1);
      r.blocks++;
      r.shareSum += t.share;
      r.endMs = startMs + TONE_BLOCK_MS;
      r.missed = 0;
      return null;
    }
    // One odd block inside a tone (a click, a codec's frame) does not end it; a second one does.
    if (r && !tonal && r.missed === 0 && r.blocks >= 2) {
      r.missed = 1;
      return null;
    }
    const ended = this.current;
    this.run = tonal ? { freqHz: t.freqHz, startMs, endMs: startMs + TONE_BLOCK_MS, blocks: 1, shareSum: t.share, missed: 0 } : null;
    return ended;
  }
}
