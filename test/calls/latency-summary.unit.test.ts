// The latency endpoint's summary from each run's stored column. The column is a per-figure histogram, bounded in size
// whatever the call's length; its percentiles are within the column's relative error (2 % at level 0, doubling per
// coarser level, plus 1 ms of rounding) of the exact ones summarizeLatency takes over the same transcripts. Rows from
// before the histograms (exact values per figure) and transcripts still in D1 count exactly.
import { describe, expect, it } from "vitest";
import { LATENCY_FIGURES, type LatencySummary, summarizeLatency } from "../../src/calls/runs/latency";
import { summarizeRuns, transcriptFigures, weightedPercentile } from "../../src/calls/runs/latency-summary";
import { errorAtLevel, longCall, random, turn } from "./long-calls";
import { histogramOf, histogramValues, latencyColumn, MAX_ENTRIES, readLatencyColumn, RELATIVE_ERROR } from "../../src/calls/session/latency-record";

/** Each percentile within its figure's `relative` error (and 1 ms) of the exact one; counts, replies and calls equal. */
function expectClose(got: LatencySummary, exact: LatencySummary, relative: Record<string, number>) {
  expect({ ...got, figures: null }).toEqual({ ...exact, figures: null });
  for (const f of LATENCY_FIGURES) {
    expect(got.figures[f].count, f).toBe(exact.figures[f].count);
    for (const p of ["p50", "p95"] as const) {
      const want = exact.figures[f][p];
      if (want === null) expect(got.figures[f][p], f).toBeNull();
      else expect(Math.abs(got.figures[f][p]! - want), `${f} ${p}: ${got.figures[f][p]} for ${want}`).toBeLessThanOrEqual(relative[f] * want + 1);
    }
  }
}

describe("a run's latency column", () => {
  it("a histogram keeps counts exactly and each value within 2 % (or 1 ms) while its entries fit", () => {
    const values = [380, 400, 401, 420, 450, 470, 500, 510];
    const h = histogramOf(values);
    expect((h as number[])[0]).toBe(0); // level 0: 380–510 fits in 16 entries of 4 % buckets
    const back = histogramValues(h);
    expect(back.reduce((n, [, c]) => n + c, 0)).toBe(8);
    const expanded = back.flatMap(([v, c]) => Array<number>(c).fill(v));
    for (const [i, v] of expanded.entries()) expect(Math.abs(v - values[i])).toBeLessThanOrEqual(RELATIVE_ERROR * values[i] + 1);
    // An outlier costs one skip, not a span of empty buckets; 0 ms reads back as 1 ms.
    const outliers = histogramOf([0, 3000, ...values]) as number[];
    expect(outliers[0]).toBe(0);
    expect(histogramValues(outliers).map(([v]) => v)).toEqual([1, ...new Set(expanded), expect.any(Number)]);
    // Values spread over more buckets than MAX_ENTRIES go to a coarser level rather than a longer list.
    const wide = histogramOf(Array.from({ length: 40 }, (_, i) => Math.round(10 * 1.15 ** i))) as number[];
    expect(wide[0]).toBeGreaterThan(0);
    expect(wide.length - 2).toBeLessThanOrEqual(MAX_ENTRIES);
    expect(histogramOf([])).toBe(0);
  });

  it("stays bounded whatever the call's length: 3, 36, 400 and 2,000 replies", () => {
    const rnd = random(38);
    const sizes = [3, 36, 400, 2000].map((n) => JSON.stringify(latencyColumn(longCall(n, rnd))).length);
    // The old column was ~72 bytes a reply (2.6 kB for 36); this one is bounded by 8 figures of at most 16 buckets.
    expect(sizes[1]).toBeLessThanOrEqual(320);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(520);
  });

  it("long calls: the summary from the columns is within the documented error of the transcripts' exact one", () => {
    const rnd = random(7);
    const transcripts = Array.from({ length: 50 }, () => longCall(36, rnd));
    const columns = transcripts.map((t) => latencyColumn(t)!);
    // The coarsest level any run needed for a figure bounds that figure's error: 2 % doubling per level.
    const levels = LATENCY_FIGURES.map((_, i) => Math.max(0, ...columns.map((c) => (Array.isArray(c[i + 1]) ? (c[i + 1] as number[])[0] : 0))));
    const relative = Object.fromEntries(LATENCY_FIGURES.map((f, i) => [f, errorAtLevel(levels[i], RELATIVE_ERROR)]));
    // Calls like these keep each stage within 2–8 % (a slow answer widens the model's spread).
    expect(Math.max(...levels)).toBeLessThanOrEqual(2);
    expectClose(summarizeRuns(7, columns), summarizeLatency(7, transcripts), relative);
    // And a single call's alone.
    expectClose(summarizeRuns(7, [columns[0]]), summarizeLatency(7, [transcripts[0]]), relative);
  });

  it("old rows' exact values and transcripts still in D1 give the exact summary", () => {
    const transcripts = [
      [
        turn("agent"),
        turn("callee"),
        turn("agent", { end_of_turn_ms: 400, first_audio_heard_ms: 900 }),
        turn("agent", { cut_ms: 300, cut_words: "on seats." }),
      ],
      [turn("agent", { end_of_turn_ms: 380, first_audio_heard_ms: 1200, stt_final_ms: 420 })],
      [turn("callee")],
    ];
    const legacy = { replies: 1, figures: { end_of_turn_ms: [380], first_audio_heard_ms: [1200], stt_final_ms: [420] } };
    expect(transcriptFigures(transcripts[1])).toEqual(legacy);
    expect(summarizeRuns(7, [transcriptFigures(transcripts[0]), legacy, transcriptFigures(transcripts[2])])).toEqual(summarizeLatency(7, transcripts));
    expect(readLatencyColumn(legacy).figures.first_audio_heard_ms).toEqual([[1200, 1]]);
    expect(latencyColumn([])).toBeNull();
  });

  it("weighted nearest rank equals nearest rank over the expanded values", () => {
    expect(
      weightedPercentile(
        [
          [100, 3],
          [200, 1],
          [50, 1],
        ],
        50,
      ),
    ).toBe(100);
    expect(
      weightedPercentile(
        [
          [100, 18],
          [300, 2],
        ],
        95,
      ),
    ).toBe(300);
    expect(
      weightedPercentile(
        [
          [100, 19],
          [300, 1],
        ],
        95,
      ),
    ).toBe(100);
    expect(weightedPercentile([], 50)).toBeNull();
  });
});
