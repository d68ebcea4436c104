// The simulator's callee sends 20 ms of audio per 20 ms of wall time, as a carrier does: a late timer is caught up
// (the next frames go at once), so a call's wall-clock length is its audio's, and the carrier's duration agrees with
// the recording.
import { describe, expect, it } from "vitest";
import { CalleeTurns, untilFrame } from "../../src/dev/simulator/media/play";

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

/** Ticks `turns` for `ms` of the callee's quiet while the agent's messages count goes as `received(t)`; the tick (ms) its line starts, or null. */
function firstLine(turns: CalleeTurns, ms: number, received: (t: number) => number): number | null {
  for (let t = 20; t <= ms; t += 20) if (turns.tick(received(t))) return t;
  return null;
}

describe("the simulated callee's turns", () => {
  it("never speaks first, and speaks 800 ms after the agent's greeting ends", () => {
    const turns = new CalleeTurns();
    expect(firstLine(turns, 10_000, () => 0)).toBeNull();
    // The greeting: 100 messages over its first 2 s, then quiet.
    expect(firstLine(turns, 10_000, (t) => Math.min(100, Math.floor(t / 20)))).toBe(2000 + 800);
  });

  it("after its line waits for the agent's answer, however long the agent thinks, then for the answer's end", () => {
    const turns = new CalleeTurns();
    firstLine(turns, 3000, (t) => Math.min(50, Math.floor(t / 20)));
    turns.lineDone(50);
    // The reply starts 2.5 s after the callee's line (a busy machine) and lasts 1 s: the next line 800 ms after it.
    expect(firstLine(turns, 10_000, (t) => (t < 2500 ? 50 : Math.min(100, 50 + Math.floor((t - 2500) / 20))))).toBe(3500 + 800);
  });

  it("says its next line anyway when the agent never answers, 5 s after the last", () => {
    const turns = new CalleeTurns();
    firstLine(turns, 3000, (t) => Math.min(50, Math.floor(t / 20)));
    turns.lineDone(50);
    expect(firstLine(turns, 10_000, () => 50)).toBe(5000);
  });

  it("what the agent said during the callee's line is not an answer to it", () => {
    const turns = new CalleeTurns();
    firstLine(turns, 3000, (t) => Math.min(50, Math.floor(t / 20)));
    // 10 of the agent's messages came while the callee spoke: counted before the line ended, so not an answer.
    turns.lineDone(60);
    expect(firstLine(turns, 10_000, () => 60)).toBe(5000);
  });
});
