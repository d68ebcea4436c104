// A DTMF receiver: the Goertzel algorithm measures the eight keypad frequencies in short blocks of audio, and a key
// counts when one row and one column hold most of a block's energy for two blocks running (Q.24's ~40 ms minimum),
// ending after two blocks without it. It reads what our own tone generator (dtmf.ts) sends after a G.711 round trip,
// a carrier's resampling, or a real phone; speech rarely puts nearly all its energy in one row and one column.
import { DTMF_COLS, DTMF_KEYS, DTMF_ROWS } from "./dtmf";

/** 25.6 ms blocks (205 samples at 8 kHz, the classic size: its bins fall near all eight frequencies). */
const BLOCK_MS = 25.6;
/** Quieter than this (RMS) is no key: line noise, a quiet room. */
const MIN_RMS = 300;
/** The row and column together must hold this share of the block's energy. */
const PAIR_SHARE = 0.6;
/** The runner-up row (and column) must be this much weaker than the winner. */
const RUNNER_UP = 1 / 6;
/** The column and row may differ in power by up to 10 dB either way (twist), as a line and codecs leave them. */
const MAX_TWIST = 10;

/** The power of one frequency in a block, as the mean square of that component (a sine of amplitude A gives A²/2). */
export function goertzel(x: Int16Array, from: number, n: number, freq: number, rate: number): number {
  const k = 2 * Math.cos((2 * Math.PI * freq) / rate);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    const s0 = x[from + i] + k * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - k * s1 * s2;
  return (2 * power) / (n * n);
}

/** The key one block holds, or null. */
function blockKey(x: Int16Array, from: number, n: number, rate: number): string | null {
  let energy = 0;
  for (let i = from; i < from + n; i++) energy += x[i] * x[i];
  energy /= n;
  if (energy < MIN_RMS * MIN_RMS) return null;
  const best = (freqs: readonly number[]) => {
    const p = freqs.map((f) => goertzel(x, from, n, f, rate));
    const i = p.indexOf(Math.max(...p));
    const runnerUp = Math.max(...p.filter((_, j) => j !== i));
    return { i, p: p[i], runnerUp };
  };
  const row = best(DTMF_ROWS);
  const col = best(DTMF_COLS);
  if (row.p + col.p < PAIR_SHARE * energy) return null;
  if (row.runnerUp > row.p * RUNNER_UP || col.runnerUp > col.p * RUNNER_UP) return null;
  if (col.p > row.p * MAX_TWIST || row.p > col.p * MAX_TWIST) return null;
  return DTMF_KEYS[row.i][col.i];
}

export type DetectedKey = { digit: string; atMs: number };

/** The keys pressed in `samples` (16-bit linear at `rate`), in order, each with when its tone began. */
export function detectDtmf(samples: Int16Array, rate: number): DetectedKey[] {
  const n = Math.round((rate * BLOCK_MS) / 1000);
  const out: DetectedKey[] = [];
  let candidate: string | null = null;
  let seen = 0;
  let on: string | null = null;
  let missed = 0;
  for (let from = 0; from + n <= samples.length; from += n) {
    const key = blockKey(samples, from, n, rate);
    if (on !== null) {
      // A key held: it ends after two blocks without it (one bad block inside a tone does not split it).
      missed = key === on ? 0 : missed + 1;
      if (missed < 2) continue;
      on = null;
    }
    seen = key !== null && key === candidate ? seen + 1 : key === null ? 0 : 1;
    candidate = key;
    if (candidate !== null && seen >= 2) {
      out.push({ digit: candidate, atMs: Math.round(((from - n) / rate) * 1000) });
      on = candidate;
      missed = 0;
      candidate = null;
      seen = 0;
    }
  }
  return out;
}

/** The keys as one string, e.g. "1234#". */
export const dtmfString = (samples: Int16Array, rate: number) =>
  detectDtmf(samples, rate)
    .map((k) => k.digit)
    .join("");
