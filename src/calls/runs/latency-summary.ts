// The agent latency summary from each run's stored figures (workflow_runs.latency, kept small in D1 when the run's
// results are saved) rather than from transcripts, which live in the runs' details objects: the endpoint reads one
// D1 column per run. The column keeps each figure as a histogram (session/latency-record.ts), so a percentile here is
// the nearest-rank percentile of the bucket representatives: within the column's relative error of the exact one
// (2 % for a figure whose values in a call span under 1.9×, 4 % under 3.6×, 8 % under 13×; docs/turn-timing.md).
// Rows written before the histograms (exact values) and transcripts still in D1 count exactly.
import { type HeardLatency, LATENCY_FIGURES, type LatencySummary } from "./latency";
import { type LatencyColumn, type LegacyLatency, readLatencyColumn, type Weighted } from "../session/latency-record";

/** The nearest-rank percentile `p` (0–100) of (value, count) pairs; null for none. */
export function weightedPercentile(pairs: Weighted, p: number): number | null {
  const sorted = [...pairs].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((n, [, c]) => n + c, 0);
  if (!total) return null;
  const rank = Math.min(total, Math.max(1, Math.ceil((p / 100) * total)));
  let seen = 0;
  for (const [v, c] of sorted) {
    seen += c;
    if (seen >= rank) return v;
  }
  return sorted[sorted.length - 1][0];
}

type TimedTurn = { role: string; timing?: Record<string, unknown> };

/** A transcript's reply figures, exact (a row from before the latency column keeps its transcript in D1). */
export function transcriptFigures(transcript: readonly TimedTurn[] | null | undefined): LegacyLatency {
  const figures: Record<string, number[]> = {};
  let replies = 0;
  for (const t of transcript ?? []) {
    if (t.role !== "agent" || !t.timing) continue;
    replies++;
    for (const [name, v] of Object.entries(t.timing)) {
      if (typeof v !== "number" || !Number.isFinite(v)) continue;
      figures[name] = figures[name] ?? [];
      figures[name].push(v);
    }
  }
  return { replies, figures };
}

export function summarizeRuns(workflowId: number, runs: ReadonlyArray<LatencyColumn | LegacyLatency>): LatencySummary {
  const read = runs.map(readLatencyColumn);
  const replies = read.reduce((n, r) => n + r.replies, 0);
  const figures = {} as LatencySummary["figures"];
  for (const f of LATENCY_FIGURES) {
    const pairs = read.flatMap((r) => r.figures[f] ?? []);
    const count = pairs.reduce((n, [, c]) => n + c, 0);
    figures[f] = { count, p50: weightedPercentile(pairs, 50), p95: weightedPercentile(pairs, 95) };
  }
  return { workflow_id: workflowId, calls: runs.length, replies, figures };
}

const heardOf = (pairs: Weighted) => ({
  count: pairs.reduce((n, [, c]) => n + c, 0),
  p50: weightedPercentile(pairs, 50),
  p90: weightedPercentile(pairs, 90),
});

/** heard_gap_ms over the runs (each with its carrier), and per carrier: most calls first, then by name. */
export function heardByCarrier(runs: ReadonlyArray<{ carrier: string | null; latency: LatencyColumn | LegacyLatency }>): HeardLatency {
  const all: Weighted = [];
  const byCarrier = new Map<string, { calls: number; pairs: Weighted }>();
  for (const r of runs) {
    const pairs = readLatencyColumn(r.latency).figures.heard_gap_ms ?? [];
    all.push(...pairs);
    const carrier = r.carrier || "unknown";
    const c = byCarrier.get(carrier) ?? { calls: 0, pairs: [] };
    c.calls++;
    c.pairs.push(...pairs);
    byCarrier.set(carrier, c);
  }
  const carriers = [...byCarrier]
    .map(([carrier, c]) => ({ carrier, calls: c.calls, ...heardOf(c.pairs) }))
    .sort((a, b) => b.calls - a.calls || a.carrier.localeCompare(b.carrier));
  return { ...heardOf(all), carriers };
}
