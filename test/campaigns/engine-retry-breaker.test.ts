// Retries by outcome and the circuit breaker.
import { beforeEach, describe, expect, it } from "vitest";
import { clock } from "../../src/lib/clock";
import { type FakeCarrier, advance, makeCampaign, phone, resetWorld, simulate, sqlOf, tick } from "./engine-harness";
import { unwrap } from "../../src/campaigns/errors";

let carrier: FakeCarrier;
beforeEach(() => {
  carrier = resetWorld();
});

describe("retries", () => {
  it("only the configured outcomes are retried, after the delay, up to max_retries", async () => {
    // Contact i always ends with outcomes[i].
    const outcomes = ["busy", "no_answer", "voicemail", "declined", "failed", "canceled", "completed"] as const;
    const { id, stub } = await makeCampaign({
      contacts: outcomes.length,
      settings: {
        rate_limit: 50,
        max_concurrency: 50,
        retry_config: { enabled: true, max_retries: 2, retry_delay_seconds: 300, retry_on_busy: true, retry_on_no_answer: true, retry_on_voicemail: false },
      },
      start: true,
    });
    const ends = new Map<number, number>();
    await simulate(carrier, [stub], {
      untilMs: clock.now() + 24 * 3600_000,
      plan: (s) => ({ durationMs: 10_000, outcome: outcomes[Number(s.req.initialContext.i)] }),
      check: () => {
        for (const s of carrier.started) if (!ends.has(s.runId) && carrier.ended.has(s.runId)) ends.set(s.runId, clock.now());
      },
    });
    const dials = (i: number) => carrier.dialsOf(id, phone(i));
    expect(outcomes.map((_, i) => dials(i).length)).toEqual([3, 3, 1, 1, 1, 1, 1]);
    for (const i of [0, 1]) {
      const [d1, d2, d3] = dials(i);
      expect([d1.req.attempt, d2.req.attempt, d3.req.attempt]).toEqual([1, 2, 3]);
      // Due at the outcome's time plus the delay (the carrier reported at the end of the call).
      expect(d2.at - ends.get(d1.runId)!).toBeGreaterThanOrEqual(300_000);
      expect(d2.at - ends.get(d1.runId)!).toBeLessThan(301_000);
      expect(d3.at - ends.get(d2.runId)!).toBeGreaterThanOrEqual(300_000);
    }
    const snap = unwrap(await stub.snapshot());
    expect(snap.state).toBe("completed");
    expect(snap.counts).toMatchObject({ total: 7, processed: 7, completed: 1, failed: 6, executed: 11, queued: 11, failed_calls: 9 });
  });

  it("voicemail retries when enabled; nothing retries when retries are disabled", async () => {
    const on = await makeCampaign({
      contacts: 1,
      settings: {
        retry_config: { enabled: true, max_retries: 1, retry_delay_seconds: 30, retry_on_busy: true, retry_on_no_answer: true, retry_on_voicemail: true },
      },
      start: true,
    });
    await simulate(carrier, [on.stub], { untilMs: clock.now() + 3600_000, plan: () => ({ durationMs: 1000, outcome: "voicemail" }) });
    expect(carrier.dialsOf(on.id, phone(0))).toHaveLength(2);
    const off = await makeCampaign({
      contacts: 1,
      settings: {
        retry_config: { enabled: false, max_retries: 5, retry_delay_seconds: 30, retry_on_busy: true, retry_on_no_answer: true, retry_on_voicemail: true },
      },
      start: true,
    });
    await simulate(carrier, [off.stub], { untilMs: clock.now() + 3600_000, plan: () => ({ durationMs: 1000, outcome: "busy" }) });
    expect(carrier.dialsOf(off.id, phone(0))).toHaveLength(1);
  });

  it("a PATCH of retry_config applies to outcomes from then on", async () => {
    const { id, stub } = await makeCampaign({ contacts: 1, settings: { rate_limit: 5 }, start: true });
    await tick(stub);
    await stub.updateSettings({ retry_config: { retry_on_busy: false } });
    await carrier.report(carrier.open(id)[0], "busy");
    await advance(3600_000, stub);
    expect(carrier.started).toHaveLength(1);
    expect(unwrap(await stub.snapshot()).state).toBe("completed");
  });
});

describe("circuit breaker", () => {
  const breaker = { enabled: true, failure_threshold: 0.5, window_seconds: 120, min_calls_in_window: 4 };

  it("pauses at the threshold and not below it", async () => {
    const { id, stub } = await makeCampaign({
      contacts: 20,
      settings: { rate_limit: 50, max_concurrency: 10, circuit_breaker: breaker, retry_config: { enabled: false } },
      start: true,
    });
    await tick(stub);
    const calls = carrier.open(id);
    const sequence = ["failed", "completed", "completed", "completed", "failed"] as const; // 1/4, then 2/5 = 0.4
    for (const [i, o] of sequence.entries()) await carrier.report(calls[i], o);
    expect(unwrap(await stub.snapshot()).state).toBe("running");
    await carrier.report(calls[5], "busy"); // not a failure: 2/6
    expect(unwrap(await stub.snapshot()).state).toBe("running");
    await carrier.report(calls[6], "failed"); // 3/7 < 0.5
    expect(unwrap(await stub.snapshot()).state).toBe("running");
    await carrier.report(calls[7], "failed"); // 4/8 = 0.5: trips
    const snap = unwrap(await stub.snapshot());
    expect(snap.state).toBe("paused");
    expect(snap.logs.map((l) => l.event).slice(0, 2)).toEqual(["campaign_paused", "circuit_breaker_tripped"]);
    expect(snap.logs[1]).toMatchObject({ level: "warning", details: { failures: 4, finished: 8, failure_threshold: 0.5 } });
    // No new dials while paused (each final status before the trip dialed the next contact at once); the calls still
    // in progress finish and are recorded.
    const dialed = carrier.started.length;
    expect(dialed).toBe(10 + 7);
    await advance(10_000, stub);
    expect(carrier.started).toHaveLength(dialed);
    await carrier.report(calls[8], "completed");
    await carrier.report(calls[9], "failed");
    for (const call of carrier.open(id)) await carrier.report(call, "completed");
    expect(carrier.started).toHaveLength(dialed);
    expect(unwrap(await stub.progress()).in_progress).toBe(0);
    // Resume resets the window: one more failure alone does not trip it again.
    await stub.resume();
    await tick(stub);
    await carrier.report(carrier.open(id)[0], "failed");
    expect(unwrap(await stub.snapshot()).state).toBe("running");
  });

  it("carrier refusals count as failures; old failures slide out of the window", async () => {
    const { id, stub } = await makeCampaign({
      contacts: 10,
      settings: { rate_limit: 1, max_concurrency: 1, circuit_breaker: breaker, retry_config: { enabled: false } },
      start: true,
    });
    // Three refusals, then successes spaced so the refusals leave the 120 s window before the fourth call ends.
    let n = 0;
    carrier.decide = () =>
      n++ < 3 ? { ok: false, runId: null, kind: "carrier_refused", message: "403 Forbidden" } : { ok: true, runId: 0, providerCallId: null };
    await tick(stub);
    await advance(2000, stub);
    expect(carrier.started).toHaveLength(3);
    expect(unwrap(await stub.snapshot()).logs.filter((l) => l.event === "dial_failed")).toHaveLength(3);
    expect(unwrap(await stub.snapshot()).state).toBe("running"); // 3 < min_calls_in_window
    await advance(130_000, stub);
    await carrier.report(carrier.open(id)[0], "completed");
    expect(unwrap(await stub.snapshot()).state).toBe("running"); // the refusals are out of the window
    // Every start refused: the round already under way finishes (its calls were started together), then nothing more.
    const refused = await makeCampaign({ contacts: 30, settings: { rate_limit: 50, max_concurrency: 10, circuit_breaker: breaker }, start: true });
    carrier.decide = () => ({ ok: false, runId: null, kind: "invalid_number", message: "not dialable" });
    await tick(refused.stub);
    expect(unwrap(await refused.stub.snapshot()).state).toBe("paused");
    await advance(600_000, refused.stub);
    expect(carrier.started.filter((s) => s.req.campaignId === refused.id)).toHaveLength(10);
    expect(await sqlOf(refused.stub, "SELECT count(*) AS n FROM attempts WHERE status = 'failed' AND failure = 1")).toEqual([{ n: 10 }]);
  });
});
