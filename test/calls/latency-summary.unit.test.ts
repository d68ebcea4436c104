// The latency endpoint's summary from each run's stored figures equals the summary from the runs' transcripts.
import { describe, expect, it } from "vitest";
import { summarizeLatency } from "../../src/calls/latency";
import { summarizeRuns } from "../../src/calls/latency-summary";
import { latencySummary } from "../../src/calls/session/details-object";

describe("summarizeRuns", () => {
  it("gives what summarizeLatency gives over the same transcripts", () => {
    const turn = (role: string, timing?: Record<string, number | string>) => ({
      role,
      text: "",
      start_ms: 0,
      end_ms: 0,
      interrupted: false,
      ...(timing ? { timing } : {}),
    });
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
    const runs = transcripts.map((t) => latencySummary(t)!);
    expect(runs[1]).toEqual({ replies: 1, figures: { end_of_turn_ms: [380], first_audio_heard_ms: [1200], stt_final_ms: [420] } });
    expect(summarizeRuns(7, runs)).toEqual(summarizeLatency(7, transcripts));
    expect(latencySummary([])).toBeNull();
  });
});
