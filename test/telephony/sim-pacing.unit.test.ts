// The simulator's callee sends 20 ms of audio per 20 ms of wall time, as a carrier does: a late timer is caught up
// (the next frames go at once), so a call's wall-clock length is its audio's, and the carrier's duration agrees with
// the recording.
import { describe, expect, it } from "vitest";
import { untilFrame } from "../../src/dev/simulator/media/play";

describe("the simulated callee's pacing", () => {
  it("waits for each frame's wall-clock time, never adding a late timer's delay", () => {
    expect(untilFrame(1000, 20, 1000)).toBe(20);
    expect(untilFrame(1000, 40, 1025)).toBe(15);
    // 300 ms behind (a busy machine): the frames due are sent at once until the clock is caught up.
    expect(untilFrame(1000, 60, 1360)).toBe(0);
    expect(untilFrame(1000, 380, 1361)).toBe(19);
  });

  it("a conversation of 460 frames takes 9.2 s of wall time however late each timer fires", () => {
    let now = 0;
    for (let t = 0; t < 460 * 20; t += 20) now += Math.max(untilFrame(0, t + 20, now), 0) + (t % 100 === 0 ? 7 : 1);
    expect(now).toBeLessThan(9200 + 10);
  });
});
