// The recording's gaps onto the replies they belong to (src/calls/after-call/heard-turns.ts), and their summary per carrier
// (heardByCarrier, src/calls/runs/latency-summary.ts) as the latency endpoint serves it.
import { describe, expect, it } from "vitest";
import type { StoredTurn } from "../../src/db/schema";
import { MATCH_MS, withHeardGaps } from "../../src/calls/after-call/heard-turns";
import { heardByCarrier } from "../../src/calls/runs/latency-summary";
import { latencyColumn } from "../../src/calls/session/latency-record";

const turn = (role: string, start_ms: number, end_ms: number, timing?: Record<string, number>): StoredTurn => ({
  role,
  text: role === "agent" ? "Great." : "Sure.",
  start_ms,
  end_ms,
  interrupted: false,
  ...(timing ? { timing } : {}),
});
const ex = (callerEndMs: number, agentStartMs: number) => ({ callerEndMs, agentStartMs, gapMs: agentStartMs - callerEndMs });

describe("withHeardGaps", () => {
  it("gives each timed reply the gap whose caller end lies nearest its origin; the greeting and an unplayed reply none", () => {
    const transcript = [
      turn("agent", 300, 1500),
      turn("callee", 2000, 3000),
      // Origin 3000 (its reply played 700 ms after the caller's last word on the agent's clock).
      turn("agent", 3700, 5000, { end_of_turn_ms: 700, first_audio_heard_ms: 700 }),
      turn("callee", 6000, 7400),
      // Origin 7400; the recording's caller end is 7550 (a soft last word the agent's louder gate did not count).
      turn("agent", 8200, 9000, { end_of_turn_ms: 700, first_audio_heard_ms: 800 }),
      // Cut before it played: no first_audio_heard_ms, nothing to match.
      turn("agent", 9500, 9600, { end_of_turn_ms: 700 }),
    ];
    const { transcript: out, matched } = withHeardGaps(transcript, [ex(3010, 3690), ex(7550, 8190)]);
    expect(matched).toBe(2);
    expect(out.map((t) => t.timing?.heard_gap_ms)).toEqual([undefined, undefined, 680, undefined, 640, undefined]);
    // The rest of each turn is kept as it was.
    expect(out[2]).toEqual({ ...transcript[2], timing: { ...transcript[2].timing, heard_gap_ms: 680 } });
    expect(out[0]).toBe(transcript[0]);
  });

  it("matches nothing too far from the origin, an exchange twice, a voice after the reply ended, or an overlap", () => {
    const reply = turn("agent", 3700, 5000, { first_audio_heard_ms: 700 });
    expect(withHeardGaps([reply], [ex(3000 - MATCH_MS - 1, 3690)]).matched).toBe(0);
    expect(withHeardGaps([reply], [ex(3000, 5100)]).matched).toBe(0);
    expect(withHeardGaps([reply], [{ callerEndMs: 3000, agentStartMs: 2900, gapMs: -100 }]).matched).toBe(0);
    const twice = withHeardGaps([reply, turn("agent", 3800, 5000, { first_audio_heard_ms: 800 })], [ex(3000, 3700)]);
    expect(twice.transcript.map((t) => t.timing?.heard_gap_ms)).toEqual([700, undefined]);
  });
});

describe("heardByCarrier", () => {
  const column = (...gaps: number[]) => latencyColumn(gaps.map((g) => ({ role: "agent", timing: { first_audio_heard_ms: g + 20, heard_gap_ms: g } })))!;

  it("p50/p90 over all the calls and per carrier, most calls first; runs without the figure count as calls only", () => {
    const h = heardByCarrier([
      { carrier: "twilio", latency: column(600, 640, 700) },
      { carrier: "twilio", latency: column(620) },
      { carrier: "vonage", latency: column(900, 1000) },
      { carrier: null, latency: latencyColumn([{ role: "agent", timing: { first_audio_heard_ms: 500 } }])! },
      { carrier: "web", latency: { replies: 1, figures: { heard_gap_ms: [750] } } },
    ]);
    // Within the column's 2 % (and 1 ms).
    const near = (got: number | null, want: number) => expect(Math.abs((got ?? 0) - want), `${got} for ${want}`).toBeLessThanOrEqual(0.02 * want + 1);
    expect(h.count).toBe(7);
    near(h.p50, 700);
    near(h.p90, 1000);
    expect(h.carriers.map((c) => [c.carrier, c.calls, c.count])).toEqual([
      ["twilio", 2, 4],
      ["unknown", 1, 0],
      ["vonage", 1, 2],
      ["web", 1, 1],
    ]);
    near(h.carriers[0].p50, 620);
    near(h.carriers[0].p90, 700);
    expect(h.carriers[1]).toMatchObject({ p50: null, p90: null });
    expect(heardByCarrier([])).toEqual({ count: 0, p50: null, p90: null, carriers: [] });
  });
});
