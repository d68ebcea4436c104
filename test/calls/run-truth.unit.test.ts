// What a run's record says of its call: a late machine verdict does not make a conversation voicemail, and an end
// stamped by a carrier's whole-second clock is never recorded before the millisecond answer.
import { describe, expect, it } from "vitest";
import { latestOf, mayBePerson } from "../../src/calls/runs/run-truth";

describe("run truth", () => {
  it("a voicemail end on an answered run may be a person's call, unless the session judged a machine itself", () => {
    const answered = { status: "in_progress", answeredAt: "2026-01-01T00:00:01.500Z", answeredBy: "machine_end_beep" };
    expect(mayBePerson(answered, "voicemail")).toBe(true);
    expect(mayBePerson({ ...answered, answeredBy: null }, "voicemail")).toBe(true);
    expect(mayBePerson({ ...answered, answeredBy: "machine_detected" }, "voicemail")).toBe(false);
    expect(mayBePerson(answered, "completed")).toBe(false);
    expect(mayBePerson({ status: "ringing", answeredAt: null, answeredBy: null }, "voicemail")).toBe(false);
  });

  it("an end is the latest of the carrier's instant, the answer and the start", () => {
    // Twilio's Timestamp "Thu, 01 Jan 2026 00:00:05 GMT" for a call answered at 00:00:05.700.
    expect(latestOf("2026-01-01T00:00:05.000Z", "2026-01-01T00:00:05.700Z", "2026-01-01T00:00:01.000Z")).toBe("2026-01-01T00:00:05.700Z");
    expect(latestOf("2026-01-01T00:00:09.000Z", "2026-01-01T00:00:05.700Z", null)).toBe("2026-01-01T00:00:09.000Z");
    expect(latestOf("2026-01-01T00:00:09.000Z", null, undefined)).toBe("2026-01-01T00:00:09.000Z");
  });
});
