// The per-agent latency summary: nearest-rank percentiles over the agent replies that carry a timing.
import { describe, expect, it } from "vitest";
import { percentile, summarizeLatency } from "../../src/calls/runs/latency";

describe("latency summary", () => {
  it("nearest rank: a measured value, never an interpolated one", () => {
    const v = Array.from({ length: 20 }, (_, i) => (i + 1) * 10);
    expect(percentile(v, 50)).toBe(100);
    expect(percentile(v, 95)).toBe(190);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 50)).toBeNull();
  });

  it("reads agent replies with a timing only, figure by figure", () => {
    const reply = (heard: number, extra: Record<string, unknown> = {}) => ({
      role: "agent",
      timing: { end_of_turn_ms: 700, first_audio_heard_ms: heard, ...extra },
    });
    const s = summarizeLatency(3, [
      [{ role: "agent" }, { role: "callee", timing: { first_audio_heard_ms: 1 } }, reply(900), reply(1100, { cut_ms: 400, cut_words: "it has" })],
      null,
      [reply(1000)],
    ]);
    expect(s).toMatchObject({ workflow_id: 3, calls: 3, replies: 3 });
    expect(s.figures.first_audio_heard_ms).toEqual({ count: 3, p50: 1000, p95: 1100 });
    expect(s.figures.cut_ms).toEqual({ count: 1, p50: 400, p95: 400 });
    expect(s.figures.stt_final_ms).toEqual({ count: 0, p50: null, p95: null });
  });
});
