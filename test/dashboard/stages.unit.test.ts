// A reply's measured stages as the call page shows them.
import { describe, expect, it } from "vitest";
// @ts-expect-error plain JavaScript module of the dashboard
import { stagesText } from "../../public/dashboard/stages.js";

describe("a reply's stages in words", () => {
  it("lists the stages reached in order, and what a barge-in cut", () => {
    expect(stagesText(undefined)).toBe("—");
    expect(stagesText({ end_of_turn_ms: 700, stt_final_ms: 702, first_audio_heard_ms: 1180 })).toBe(
      "end of turn 700 · transcript 702 · heard by the caller 1180 ms",
    );
    expect(stagesText({ end_of_turn_ms: 700, first_audio_heard_ms: 1180, heard_gap_ms: 1140 })).toBe(
      "end of turn 700 · heard by the caller 1180 ms; on the recording: the caller's voice → the agent's 1140 ms",
    );
    expect(stagesText({ end_of_turn_ms: 700, cut_ms: 3420, cut_words: "has many parts." })).toBe(
      'end of turn 700 ms; cut: 3.4 s not heard ("has many parts.")',
    );
  });
});
