// The demo's data checks themselves: each catches the contradiction the issue saw on the pages, and passes the truth.
import { describe, expect, it } from "vitest";
import { logProblems, progressProblems, runProblems, wavSeconds } from "./invariants";

const run = {
  name: "WR-1",
  status: "completed",
  answered_by: null,
  answered_at: "2026-01-01T00:00:01.500Z",
  ended_at: "2026-01-01T00:00:10.900Z",
  duration_seconds: 9,
  transcript: [
    { role: "agent", text: "Hi Ada!" },
    { role: "callee", text: "Sure, tell me more." },
  ],
};

describe("the demo's invariants", () => {
  it("a run: conversation never voicemail, answer before end, duration within 1 s of the recording", () => {
    expect(runProblems(run, 9.4)).toEqual([]);
    expect(runProblems({ ...run, status: "voicemail" }, 9.4)).toEqual(["WR-1: voicemail, yet the callee talked with the agent"]);
    expect(runProblems({ ...run, ended_at: "2026-01-01T00:00:01.000Z" }, 9.4)[0]).toMatch(/answered_at .* after ended_at/);
    expect(runProblems({ ...run, duration_seconds: 7 }, 9.4)).toEqual(["WR-1: duration 7 s, recording 9.4 s"]);
    expect(runProblems({ ...run, duration_seconds: 30, transfer: { mode: "cold" } }, 9.4)).toEqual([]);
  });

  it("progress: the counters add up", () => {
    const p = {
      state: "running",
      total: 24,
      processed: 9,
      completed: 1,
      failed: 1,
      pending: 15,
      in_progress: 4,
      retry_waiting: 3,
      total_rows: 24,
      processed_rows: 9,
      progress_percentage: 37.5,
      completion_percentage: 37.5,
      failed_calls: 4,
    };
    expect(progressProblems(p, 9)).toEqual([]);
    expect(progressProblems({ ...p, retry_waiting: 2 }, 9)).toHaveLength(1);
    // An answered call with no conversation is counted apart, and still adds up.
    expect(progressProblems({ ...p, completed: 0, answered_no_conversation: 1 }, 9)).toEqual([]);
    expect(progressProblems({ ...p, answered_no_conversation: 1 }, 9)).toHaveLength(1);
    expect(progressProblems({ ...p, state: "completed" }, 9)).toEqual(["completed with contacts still pending, in progress or waiting"]);
  });

  it("logs: no bare row number, no line past the file's", () => {
    expect(logProblems([{ message: "Contact 24 (CSV line 25): ...", details: { row: 25 } }], 24)).toEqual([]);
    expect(logProblems([{ message: "Row 25: the agent's disposition is", details: { row: 26 } }], 24)).toHaveLength(2);
  });

  it("a WAV's length from its data chunk", () => {
    const wav = new Uint8Array(44 + 8000 * 2 * 2 * 3);
    const v = new DataView(wav.buffer);
    wav.set(new TextEncoder().encode("RIFF"), 0);
    wav.set(new TextEncoder().encode("WAVEfmt "), 8);
    v.setUint32(16, 16, true);
    v.setUint16(22, 2, true);
    v.setUint32(24, 8000, true);
    wav.set(new TextEncoder().encode("data"), 36);
    v.setUint32(40, 8000 * 2 * 2 * 3, true);
    expect(wavSeconds(wav)).toBe(3);
  });
});
