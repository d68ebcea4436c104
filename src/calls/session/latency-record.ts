// A run's reply timings as the small `workflow_runs.latency` column: per figure a log-scale histogram, so the row
// stays the same size whatever the call's length (docs/turn-timing.md). Every value lands in a bucket whose
// representative is within RELATIVE_ERROR of it (or 1 ms, from rounding to whole ms); counts are exact. A figure whose
// histogram would take more than MAX_ENTRIES entries is recorded at a coarser level (each level squares the bucket
// ratio, so the bound doubles: 2 %, 4 %, 8 %...), which keeps the column bounded for any spread of values.
// Stored shape: [replies, h_0, h_1, ...] in STORED_FIGURES order, h = 0 (no value) or [level, first bucket, entries...]
// where an entry is a bucket's count, or -g for g empty buckets skipped (an outlier costs one entry, not a gap);
// trailing zeros dropped. Rows written before it hold {replies, figures: {name: [ms...]}} and are still read.

/** The figures kept, in this order for ever (a new one goes at the end: older rows simply lack it). */
export const STORED_FIGURES = [
  "end_of_turn_ms",
  "stt_final_ms",
  "model_first_token_ms",
  "first_sentence_ms",
  "voice_first_byte_ms",
  "first_audio_sent_ms",
  "first_audio_heard_ms",
  "cut_ms",
  // Measured after the call on its recording (src/calls/after-call/heard-latency.ts), not by the agent's clocks.
  "heard_gap_ms",
] as const;

/** The bucket representative's largest relative distance from any value it stands for, at level 0. */
export const RELATIVE_ERROR = 0.02;
/** The most entries one figure's histogram keeps (counts and skips). */
export const MAX_ENTRIES = 16;
const GAMMA = (1 + RELATIVE_ERROR) / (1 - RELATIVE_ERROR);

type Histogram = number[] | 0;
export type LatencyColumn = Array<number | number[]>;
/** What rows written before the compact column hold: every value, per figure name. */
export type LegacyLatency = { replies: number; figures: Record<string, number[]> };
/** One figure's values as (value, how many) pairs. */
export type Weighted = Array<[value: number, count: number]>;

const gammaAt = (level: number) => GAMMA ** (2 ** level);
// Index k holds (γ^(k-1), γ^k], index 0 everything up to 1 ms (a 0 is read back as 1: within the 1 ms bound, and no
// bucket for 0 to stretch the span).
const indexOf = (v: number, logGamma: number) => Math.max(0, Math.ceil(Math.log(Math.max(1, v)) / logGamma));
const representative = (k: number, gamma: number) => Math.round((2 * gamma ** k) / (1 + gamma));

/** One figure's values as a histogram at the finest level whose entries fit MAX_ENTRIES. */
export function histogramOf(values: readonly number[]): Histogram {
  if (!values.length) return 0;
  for (let level = 0; ; level++) {
    const logGamma = Math.log(gammaAt(level));
    const idx = values.map((v) => indexOf(v, logGamma)).sort((a, b) => a - b);
    const entries: number[] = [];
    let at = idx[0];
    for (let i = 0; i < idx.length; ) {
      const gap = idx[i] - at;
      if (gap === 1) entries.push(0);
      else if (gap > 1) entries.push(-gap);
      let count = 0;
      for (at = idx[i]; i < idx.length && idx[i] === at; i++) count++;
      entries.push(count);
      at++;
    }
    if (entries.length <= MAX_ENTRIES) return [level, idx[0], ...entries];
  }
}

/** A histogram back as (representative, count) pairs, ascending. */
export function histogramValues(h: unknown): Weighted {
  if (!Array.isArray(h) || h.length < 3) return [];
  const [level, first, ...entries] = h as number[];
  const gamma = gammaAt(level);
  const out: Weighted = [];
  let at = first;
  for (const e of entries) {
    if (e < 0) {
      at -= e;
      continue;
    }
    if (e > 0) out.push([representative(at, gamma), e]);
    at++;
  }
  return out;
}

type TimedTurn = { role: string; timing?: Record<string, unknown> };

/** The column for a transcript's agent replies with a timing; null: no transcript. */
export function latencyColumn(transcript: readonly TimedTurn[] | null | undefined): LatencyColumn | null {
  if (!transcript?.length) return null;
  const values = STORED_FIGURES.map(() => [] as number[]);
  let replies = 0;
  for (const t of transcript) {
    if (t.role !== "agent" || !t.timing) continue;
    replies++;
    STORED_FIGURES.forEach((f, i) => {
      const v = t.timing?.[f];
      if (typeof v === "number" && Number.isFinite(v)) values[i].push(Math.round(v));
    });
  }
  const column: LatencyColumn = [replies, ...values.map(histogramOf)];
  while (column.length > 1 && column[column.length - 1] === 0) column.pop();
  return column;
}

/** Replies and each figure's weighted values from a stored column, either shape (old rows keep exact values). */
export function readLatencyColumn(stored: LatencyColumn | LegacyLatency): { replies: number; figures: Record<string, Weighted> } {
  const figures: Record<string, Weighted> = {};
  if (Array.isArray(stored)) {
    STORED_FIGURES.forEach((f, i) => {
      const pairs = histogramValues(stored[i + 1]);
      if (pairs.length) figures[f] = pairs;
    });
    return { replies: typeof stored[0] === "number" ? stored[0] : 0, figures };
  }
  for (const [f, vs] of Object.entries(stored.figures ?? {})) figures[f] = vs.map((v) => [v, 1]);
  return { replies: stored.replies ?? 0, figures };
}
