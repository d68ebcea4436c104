// What one media socket may send (the call session's input guard), on a clock the test passes in: a burst within the
// limits goes through, the excess is dropped, only a socket still over its limit after FLOOD_MS is flooding, a second
// within the limits ends an episode, and only a run of unreadable messages breaks the stream.
import { describe, expect, it } from "vitest";
import { BYTE_LIMIT, FLOOD_MS, InputGuard, MAX_BAD_IN_A_ROW, MESSAGE_LIMIT } from "../../src/calls/session/input-guard";

describe("the media input guard", () => {
  /** Sends two messages a millisecond (twice the limit) from `from` until `to`; the verdicts by time. */
  const flood = (g: InputGuard, from: number, to: number): Map<number, string[]> => {
    const verdicts = new Map<number, string[]>();
    for (let t = from; t < to; t++) verdicts.set(t, [g.admit(160, t), g.admit(160, t)]);
    return verdicts;
  };
  const firstFlood = (v: Map<number, string[]>) => [...v].find(([, vs]) => vs.includes("flood"))?.[0];

  it("lets a burst through, drops the excess, and calls it a flood only once it has lasted FLOOD_MS", () => {
    const g = new InputGuard();
    for (let i = 0; i < MESSAGE_LIMIT.burst; i++) expect(g.admit(160, 0)).toBe("ok");
    expect(g.admit(160, 0)).toBe("drop");
    // A carrier sending far too fast from then on: the refill lets some through, but the episode goes on.
    const v = flood(g, 1, FLOOD_MS + 10);
    expect(firstFlood(v)).toBe(FLOOD_MS);
    expect(g.dropped).toBeGreaterThan(FLOOD_MS / 2);
  });

  it("a second within the limits ends an episode: a later flood is judged from its own start", () => {
    const g = new InputGuard();
    for (let i = 0; i <= MESSAGE_LIMIT.burst; i++) g.admit(160, 0);
    expect(g.dropped).toBe(1);
    // A carrier's real rate (50 a second) for a second and a half.
    for (let t = 1000; t <= 2500; t += 20) expect(g.admit(160, t)).toBe("ok");
    // A flood from 2520: the full bucket lasts a while, then drops begin. Had the first episode gone on (it began
    // at 0), its first drop would be a flood at once; it is a new episode, a flood FLOOD_MS after its first drop.
    const v = flood(g, 2520, 2520 + 2 * FLOOD_MS);
    const firstDrop = [...v].find(([, vs]) => vs.includes("drop"))?.[0] ?? Number.NaN;
    expect(firstDrop).toBeGreaterThan(3000);
    expect(firstFlood(v)).toBe(firstDrop + FLOOD_MS);
  });

  it("bytes count too: a message larger than the byte burst is dropped, a carrier's frames are not", () => {
    const g = new InputGuard();
    expect(g.admit(BYTE_LIMIT.burst + 1, 0)).toBe("drop");
    for (let t = 0; t < 10_000; t += 20) expect(g.admit(1280, t)).toBe("ok");
  });

  it("unreadable messages break the stream only after MAX_BAD_IN_A_ROW in a row", () => {
    const g = new InputGuard();
    for (let i = 1; i < MAX_BAD_IN_A_ROW; i++) expect(g.unreadable()).toBe(false);
    g.readable();
    for (let i = 1; i < MAX_BAD_IN_A_ROW; i++) expect(g.unreadable()).toBe(false);
    expect(g.unreadable()).toBe(true);
    expect(g.bad).toBe(2 * MAX_BAD_IN_A_ROW - 1);
  });
});
