import { describe, expect, it } from "vitest";
import { BreakerWindow, breakerTrips, breakerWindowStart } from "../../../src/campaigns/engine/breaker";
import { refusable, unwrap } from "../../../src/campaigns/errors";
import { EngineError } from "../../../src/campaigns/engine/refusals";
import { PaceWindow, nextStartAt, startBudget } from "../../../src/campaigns/engine/pacing";
import { retryDueAt } from "../../../src/campaigns/engine/retry";
import { STATES, nextState, refusal, type Trigger } from "../../../src/campaigns/engine/transitions";
import { CircuitBreaker, RetryConfig } from "../../../src/campaigns/engine/settings";

describe("transition table", () => {
  const allowed: Record<string, string> = {
    "importing imported": "draft",
    "importing cancel": "cancelled",
    "importing source_failed": "failed",
    "importing update": "importing",
    "draft start": "running",
    "paused start": "running",
    "paused resume": "running",
    "running pause": "paused",
    "running breaker_trip": "paused",
    "running complete": "completed",
    "draft cancel": "cancelled",
    "running cancel": "cancelled",
    "paused cancel": "cancelled",
    "draft source_failed": "failed",
    "running source_failed": "failed",
    "completed redial": "completed",
    "cancelled redial": "cancelled",
    "draft update": "draft",
    "running update": "running",
    "paused update": "paused",
  };
  const triggers: Trigger[] = ["imported", "start", "resume", "pause", "breaker_trip", "complete", "cancel", "source_failed", "redial", "update"];
  it("allows exactly the listed transitions", () => {
    for (const from of STATES) for (const t of triggers) expect([from, t, nextState(from, t)]).toEqual([from, t, allowed[`${from} ${t}`] ?? null]);
  });
  it("names the state in a refusal", () => {
    expect(refusal("draft", "pause")).toBe("Cannot pause a campaign in state 'draft'");
    expect(refusal("completed", "update")).toBe("Cannot update a campaign in state 'completed'");
  });
  it("a refusal crosses RPC as a typed value and maps back to its API error", async () => {
    const refused = await refusable(() => {
      throw new EngineError(409, "Cannot pause a campaign in state 'draft'");
    });
    expect(refused).toEqual({ ok: false, status: 409, detail: "Cannot pause a campaign in state 'draft'" });
    expect(() => unwrap(refused)).toThrow(expect.objectContaining({ status: 409, detail: "Cannot pause a campaign in state 'draft'" }));
    const invalid = await refusable(() => {
      throw new EngineError(422, "name must be 1 to 255 characters");
    });
    expect(() => unwrap(invalid)).toThrow(
      expect.objectContaining({ status: 422, detail: [{ loc: ["body"], msg: "name must be 1 to 255 characters", type: "value_error" }] }),
    );
    expect(await refusable(() => 7)).toEqual({ ok: true, value: 7 });
    // Anything else is a fault, not a refusal: it is thrown on.
    await expect(refusable(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
  });
});

describe("retry policy", () => {
  const cfg = RetryConfig.parse({});
  it("retries busy and no_answer by default, not voicemail or the never-retried outcomes", () => {
    expect(retryDueAt("busy", 1, cfg, 1000)).toBe(1000 + 120_000);
    expect(retryDueAt("no_answer", 1, cfg, 0)).toBe(120_000);
    for (const o of ["voicemail", "completed", "declined", "failed", "canceled", "unknown"]) expect(retryDueAt(o, 1, cfg, 0)).toBeNull();
    expect(retryDueAt("voicemail", 1, { ...cfg, retry_on_voicemail: true }, 0)).toBe(120_000);
    expect(retryDueAt("busy", 1, { ...cfg, retry_on_busy: false }, 0)).toBeNull();
  });
  it("stops after max_retries retries, and entirely when disabled", () => {
    expect(retryDueAt("busy", 2, cfg, 0)).not.toBeNull();
    expect(retryDueAt("busy", 3, cfg, 0)).toBeNull();
    expect(retryDueAt("busy", 1, { ...cfg, max_retries: 0 }, 0)).toBeNull();
    expect(retryDueAt("busy", 1, { ...cfg, enabled: false }, 0)).toBeNull();
  });
});

describe("circuit breaker", () => {
  const cfg = CircuitBreaker.parse({ enabled: true }); // 0.5, 120 s, 5 calls
  it("trips at the threshold with enough calls, not below either", () => {
    expect(breakerTrips(cfg, 5, 3)).toBe(true);
    expect(breakerTrips(cfg, 6, 3)).toBe(true); // exactly 0.5
    expect(breakerTrips(cfg, 7, 3)).toBe(false);
    expect(breakerTrips(cfg, 4, 4)).toBe(false); // too few calls in the window
    expect(breakerTrips({ ...cfg, enabled: false }, 10, 10)).toBe(false);
  });
  it("slides: old events leave the window, and a reset forgets everything before it", () => {
    const w = new BreakerWindow();
    for (let i = 0; i < 5; i++) w.record(i * 1000, true);
    expect(w.trips(cfg, 5000)).toBe(true);
    expect(w.trips(cfg, 124_001)).toBe(false); // the first event left the window
    expect(breakerWindowStart(200_000, cfg, 150_000)).toBe(150_000);
    const r = new BreakerWindow();
    for (let i = 0; i < 5; i++) r.record(1000, true);
    r.reset(2000);
    expect(r.trips(cfg, 3000)).toBe(false);
  });
});

describe("pacing", () => {
  it("allows rate starts in any 1000 ms window", () => {
    expect(startBudget([], 2, 0)).toBe(2);
    expect(startBudget([0], 2, 0)).toBe(1);
    expect(startBudget([0, 10], 2, 500)).toBe(0);
    expect(nextStartAt([0, 10], 2, 500)).toBe(1000);
    expect(startBudget([0, 10], 2, 1000)).toBe(1);
    expect(nextStartAt([0, 10, 1000, 1010], 2, 1500)).toBe(2000);
  });
  it("a window of starts never holds more than rate in any second", () => {
    const p = new PaceWindow();
    const starts: number[] = [];
    let t = 0;
    for (let i = 0; i < 500; i++) {
      t = Math.max(t, p.nextAt(3, t));
      p.record(t);
      starts.push(t);
      t += (i * 37) % 400;
    }
    for (const s of starts) expect(starts.filter((x) => x > s - 1000 && x <= s).length).toBeLessThanOrEqual(3);
  });
});
