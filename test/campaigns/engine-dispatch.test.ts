// Dispatch: concurrency, the organization cap, pacing, pause, completion.
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { clock } from "../../src/lib/clock";
import { numberZoneKey } from "../../src/telephony/number-zones";
import { type FakeCarrier, advance, makeCampaign, orgStub, resetWorld, simulate, sqlOf, tick } from "./engine-harness";
import { unwrap } from "../../src/campaigns/errors";

let carrier: FakeCarrier;
beforeEach(() => {
  carrier = resetWorld();
});

describe("dispatch", () => {
  it("starts nothing before start, then dials up to max_concurrency, no faster than rate_limit", async () => {
    const { id, stub } = await makeCampaign({ contacts: 10, settings: { max_concurrency: 3, rate_limit: 2 } });
    await tick(stub);
    expect(carrier.started).toHaveLength(0);
    await stub.start();
    await tick(stub);
    expect(carrier.open(id)).toHaveLength(2); // rate_limit 2 per second
    await advance(1000, stub);
    expect(carrier.open(id)).toHaveLength(3); // max_concurrency
    await advance(5000, stub);
    expect(carrier.open(id)).toHaveLength(3);
    const req = carrier.started[0].req;
    expect(req).toMatchObject({
      campaignId: id,
      attempt: 1,
      phoneNumber: "+14155550000",
      initialContext: { i: "0" },
      leaseId: `campaign:${id}:${req.contactId}:1`,
    });
    const p = unwrap(await stub.progress());
    expect(p).toMatchObject({ state: "running", total: 10, processed: 3, pending: 7, in_progress: 3 });
  });

  it("a round's starts, answered together or apart, each record their own run and call id", async () => {
    const { id, stub } = await makeCampaign({ contacts: 6, settings: { max_concurrency: 6, rate_limit: 50 } });
    // The third number's carrier answers a few turns of the queue later (after the others' answers were written,
    // so on its own), the fifth's refuses; the others answer at once (written together).
    carrier.decide = (req) => {
      if (req.phoneNumber.endsWith("0002")) {
        let later = Promise.resolve();
        for (let i = 0; i < 5; i++) later = later.then(() => undefined);
        return later.then(() => ({ ok: true, runId: 0, providerCallId: "late-call" }));
      }
      if (req.phoneNumber.endsWith("0004")) return { ok: false, runId: null, message: "refused", kind: "carrier_refused" };
      return { ok: true, runId: 0, providerCallId: null };
    };
    await stub.start();
    await tick(stub);
    const got = await sqlOf(
      stub,
      "SELECT c.phone_number, a.status, a.run_id, a.provider_call_id FROM attempts a JOIN contacts c ON c.id = a.contact_id ORDER BY c.id",
    );
    const runOf = (phone: string) => carrier.started.find((s) => s.req.campaignId === id && s.req.phoneNumber === phone)!.runId;
    expect(got).toEqual(
      ["0000", "0001", "0002", "0003", "0004", "0005"].map((n) => {
        const phone = `+1415555${n}`;
        const runId = runOf(phone);
        if (n === "0004") return { phone_number: phone, status: "failed", run_id: runId, provider_call_id: null };
        return { phone_number: phone, status: "in_flight", run_id: runId, provider_call_id: n === "0002" ? "late-call" : `call-${runId}` };
      }),
    );
    expect(new Set(got.map((g) => g.run_id)).size).toBe(6);
  });
});

describe("concurrency caps", () => {
  it("two campaigns sharing the organization's cap: in flight never exceeds either cap", async () => {
    const orgId = (await makeCampaign()).orgId;
    await orgStub(orgId).setCap(5);
    const a = await makeCampaign({ orgId, contacts: 30, settings: { max_concurrency: 4, rate_limit: 10 } });
    const b = await makeCampaign({ orgId, contacts: 30, settings: { max_concurrency: 4, rate_limit: 10 } });
    await a.stub.start();
    await b.stub.start();
    let peak = 0;
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    await simulate(carrier, [a.stub, b.stub], {
      untilMs: clock.now() + 3600_000,
      plan: () => ({ durationMs: 1000 + Math.floor(rnd() * 30_000), outcome: "completed" }),
      check: async () => {
        const ia = carrier.open(a.id).length;
        const ib = carrier.open(b.id).length;
        expect(ia).toBeLessThanOrEqual(4);
        expect(ib).toBeLessThanOrEqual(4);
        expect(ia + ib).toBeLessThanOrEqual(5);
        expect((await orgStub(orgId).usage()).inUse).toBeLessThanOrEqual(5);
        peak = Math.max(peak, ia + ib);
      },
    });
    expect(peak).toBe(5); // the cap was actually reached
    expect(unwrap(await a.stub.snapshot()).state).toBe("completed");
    expect(unwrap(await b.stub.snapshot()).state).toBe("completed");
    expect((await orgStub(orgId).usage()).inUse).toBe(0);
    const logs = [...unwrap(await a.stub.logs(100)).items, ...unwrap(await b.stub.logs(100)).items];
    expect(logs.some((l) => l.event === "org_cap_reached")).toBe(true);
  });

  it("single calls hold slots of the same cap", async () => {
    const { id, orgId, stub } = await makeCampaign({ contacts: 5, settings: { max_concurrency: 5, rate_limit: 10 } });
    await orgStub(orgId).setCap(3);
    expect((await orgStub(orgId).acquire({ leaseId: "single:a", ttlSeconds: 60 })).granted).toBe(true);
    expect((await orgStub(orgId).acquire({ leaseId: "single:b", ttlSeconds: 60 })).granted).toBe(true);
    await stub.start();
    await tick(stub);
    expect(carrier.open(id)).toHaveLength(1);
    expect(unwrap(await stub.snapshot()).logs[0]).toMatchObject({ event: "org_cap_reached", level: "warning", details: { in_use: 3, cap: 3 } });
    // A single call ends: the organization wakes the waiting campaign, which dials into the freed slot.
    await orgStub(orgId).release("single:a");
    await tick(stub);
    expect(carrier.open(id)).toHaveLength(2);
    // Leases expire, so a lost release cannot hold a slot forever.
    clock.advance(61_000);
    await advance(5000, stub);
    expect(carrier.open(id)).toHaveLength(3);
  });

  it("the organization object: idempotent acquire, release, expiry, cap", async () => {
    const org = orgStub(123_456_789);
    await org.setCap(2);
    expect(await org.acquire({ leaseId: "x", ttlSeconds: 10 })).toMatchObject({ granted: true, inUse: 1, cap: 2 });
    expect(await org.acquire({ leaseId: "x", ttlSeconds: 10 })).toMatchObject({ granted: true, inUse: 1 });
    expect(await org.acquire({ leaseId: "y", ttlSeconds: 10 })).toMatchObject({ granted: true, inUse: 2 });
    const refused = await org.acquire({ leaseId: "z", ttlSeconds: 10 });
    expect(refused).toMatchObject({ granted: false, inUse: 2, cap: 2 });
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(await org.release("x")).toBe(true);
    expect(await org.release("x")).toBe(false);
    clock.advance(10_000);
    expect(await org.usage()).toEqual({ inUse: 0, cap: 2 });
    await org.setCap(null);
    expect((await org.usage()).cap).toBe(20); // ORG_MAX_CONCURRENT_CALLS
  });

  it("the organization object: a batch decides as the same requests one by one would", async () => {
    const hour = { max: 2, windowMs: 3_600_000 };
    // Held leases, a suppressed number, a number at its attempt cap (counting dials earlier in the batch), the same
    // lease twice, a release first, and the cap running out part way.
    const reqs = [
      { leaseId: "held", ttlSeconds: 60, dial: { number: "+12025550100", cap: hour } },
      { leaseId: "s1", ttlSeconds: 60, dial: { number: "+12025550199", cap: hour } },
      { leaseId: "c1", ttlSeconds: 60, dial: { number: "+12025550111", cap: hour } },
      { leaseId: "c2", ttlSeconds: 60, dial: { number: "+12025550111", cap: hour } },
      { leaseId: "c2", ttlSeconds: 60, dial: { number: "+12025550111", cap: hour } },
      { leaseId: "c3", ttlSeconds: 60, dial: { number: "+12025550111", cap: hour } },
      { leaseId: "a", ttlSeconds: 60, waiter: 42 },
      { leaseId: "b", ttlSeconds: 60, dial: { number: "+12025550122", cap: null } },
      { leaseId: "c", ttlSeconds: 60 },
    ];
    const prepare = async (orgId: number) => {
      const org = orgStub(orgId);
      await org.setCap(5);
      await org.suppress([{ number: "+12025550199", reason: null }], "test");
      await org.acquire({ leaseId: "held", ttlSeconds: 60, dial: { number: "+12025550100", cap: hour } });
      await org.acquire({ leaseId: "gone", ttlSeconds: 60 });
      return org;
    };
    const one = await prepare(123_456_001);
    const other = await prepare(123_456_002);
    clock.advance(1000);
    await one.release("gone");
    const singly = [];
    for (const r of reqs) singly.push(await one.acquire(r));
    const batch = await other.acquireMany(reqs, ["gone"]);
    expect(batch).toEqual(singly);
    expect(batch.map((r) => (r.granted ? "granted" : (r.skip ?? "cap")))).toEqual([
      "granted",
      "suppressed",
      "granted",
      "granted",
      "granted",
      "attempt_cap",
      "granted",
      "granted",
      "cap",
    ]);
    expect(await one.usage()).toEqual(await other.usage());

    // The cap reached inside a batch with no lease stored before it: the refusal's retry counts the batch's grants.
    const empty = [orgStub(123_456_003), orgStub(123_456_004)];
    for (const org of empty) await org.setCap(2);
    const three = ["x", "y", "z"].map((leaseId) => ({ leaseId, ttlSeconds: 60 }));
    const alone = [];
    for (const r of three) alone.push(await empty[0].acquire(r));
    expect(await empty[1].acquireMany(three)).toEqual(alone);
    expect(alone[2]).toMatchObject({ granted: false, retryAfterSeconds: 5 });
  });
});

describe("zones given out ahead", () => {
  it("each contact gets its own zone: its timezone column, else its number's", async () => {
    const numbers = ["+14155550100", "+442079460000", "+61291234567", "+14155550101", "+81312345678", "+12125550100"];
    const zones: Record<string, string> = { "+14155550101": "Asia/Tokyo", "+12125550100": "Not/AZone" };
    const { stub } = await makeCampaign({
      rows: numbers.map((n, i) => ({
        row: i + 2,
        phone_number: n,
        initial_context: n in zones ? { timezone: zones[n] } : ({} as Record<string, string>),
        greeting_override: null,
      })),
      settings: { max_concurrency: 1, rate_limit: 50 },
      start: true,
    });
    await tick(stub);
    const got = await sqlOf<{ phone_number: string; key: string }>(
      stub,
      "SELECT c.phone_number, z.key FROM contacts c JOIN zones z ON z.id = c.zone_id ORDER BY c.id",
    );
    // A zone the runtime does not know falls back to the number's.
    expect(got).toEqual(numbers.map((n) => ({ phone_number: n, key: zones[n] === "Asia/Tokyo" ? "Asia/Tokyo" : numberZoneKey(n) })));
    expect(new Set(got.map((g) => g.key)).size).toBeGreaterThanOrEqual(5);
  });

  it("the alarm keeps contacts zoned ahead of dispatch, 500 at a time up to 1,000, so rounds find them ready", async () => {
    const zoned = async (stub: Parameters<typeof sqlOf>[0]) =>
      (await sqlOf<{ n: number }>(stub, "SELECT count(*) AS n FROM contacts WHERE status = 'queued' AND zone_id IS NOT NULL"))[0].n;
    const { stub } = await makeCampaign({ contacts: 3000, settings: { max_concurrency: 3, rate_limit: 50 }, start: true });
    await tick(stub);
    // The first round gave out only the 3 it needed (none were ahead) and dialed them; the alarm after it added a batch.
    expect(await zoned(stub)).toBe(500);
    // Under 1,000 ahead: the next alarm adds a batch; at 1,000 or more, the one after adds none.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await zoned(stub)).toBe(1000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await zoned(stub)).toBe(1000);
  });
});

describe("calling rules read beside dispatch", () => {
  it("a stale copy serves the round while it is read again; the next round has the new rules", async () => {
    const { id, orgId, stub } = await makeCampaign({ contacts: 10, settings: { max_concurrency: 1, rate_limit: 50 }, start: true });
    await tick(stub);
    expect(carrier.started).toHaveLength(1); // the rules were read (none set: local hours off here)
    // Local hours set now that no US zone is in: an hour starting 8 hours after New York's current hour.
    const nyHour = Number(new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York", hour: "numeric", hourCycle: "h23" }).format(clock.now()));
    const hh = (h: number) => `${String(h % 24).padStart(2, "0")}:00`;
    await env.DB.prepare("INSERT OR IGNORE INTO organizations (id, name) VALUES (?, ?)").bind(orgId, `org ${orgId}`).run();
    await env.DB.prepare("INSERT INTO calling_policies (org_id, local_hours) VALUES (?, ?)")
      .bind(orgId, JSON.stringify({ enabled: true, start: hh(nyHour + 8), end: hh(nyHour + 9) }))
      .run();
    // Within the minute the copy is fresh: the next call is dialed.
    await carrier.report(carrier.open(id)[0], "completed");
    await tick(stub);
    expect(carrier.started).toHaveLength(2);
    // Past the minute, the stale copy still serves this round (no D1 read in its way) ...
    clock.advance(61_000);
    await carrier.report(carrier.open(id)[0], "completed");
    await tick(stub);
    expect(carrier.started).toHaveLength(3);
    // ... and the read it started gives the next round the new rules: nobody is in their local hours.
    await carrier.report(carrier.open(id)[0], "completed");
    await tick(stub);
    expect(carrier.started).toHaveLength(3);
    expect(unwrap(await stub.progress()).calling_rules.held_local_hours).toBe(7);
  });
});

describe("pause and settings", () => {
  it("pause stops new dials; calls in progress finish and are recorded; resume continues", async () => {
    const { id, stub } = await makeCampaign({ contacts: 6, settings: { max_concurrency: 3, rate_limit: 10 }, start: true });
    await tick(stub);
    const inFlight = carrier.open(id);
    expect(inFlight).toHaveLength(3);
    const paused = unwrap(await stub.pause());
    expect(paused.logs[0]).toMatchObject({ event: "campaign_paused", details: { in_progress: 3 } });
    await carrier.report(inFlight[0], "completed");
    await carrier.report(inFlight[1], "no_answer");
    await advance(600_000, stub); // the no_answer retry comes due, but nothing dials while paused
    expect(carrier.started).toHaveLength(3);
    await carrier.report(inFlight[2], "completed");
    const p = unwrap(await stub.progress());
    expect(p).toMatchObject({ state: "paused", completed: 2, processed: 3, in_progress: 0, pending: 3 });
    await stub.resume();
    await tick(stub);
    expect(carrier.open(id)).toHaveLength(3);
    expect(
      carrier
        .open(id)
        .map((s) => s.req.attempt)
        .sort(),
    ).toEqual([1, 1, 2]); // the due retry goes first
  });

  it("PATCH takes effect at once: more concurrency dials now, less holds new dials back", async () => {
    const { id, stub } = await makeCampaign({ contacts: 10, settings: { max_concurrency: 2, rate_limit: 50 }, start: true });
    await tick(stub);
    expect(carrier.open(id)).toHaveLength(2);
    await stub.updateSettings({ max_concurrency: 5 });
    await tick(stub);
    expect(carrier.open(id)).toHaveLength(5);
    await stub.updateSettings({ max_concurrency: 1 });
    for (const s of carrier.open(id).slice(0, 3)) await carrier.report(s, "completed");
    await tick(stub);
    expect(carrier.open(id)).toHaveLength(2); // still above the new cap: nothing new starts
    for (const s of carrier.open(id)) await carrier.report(s, "completed");
    await tick(stub);
    expect(carrier.open(id)).toHaveLength(1);
    expect(unwrap(await stub.snapshot()).logs.some((l) => l.event === "settings_updated")).toBe(true);
  });

  it("cancel skips pending contacts while calls in progress finish and are recorded", async () => {
    const { id, stub } = await makeCampaign({ contacts: 5, settings: { max_concurrency: 2, rate_limit: 10 }, start: true });
    await tick(stub);
    const [a, b] = carrier.open(id);
    await carrier.report(a, "busy"); // awaiting retry: skipped by cancel
    await tick(stub);
    const snap = unwrap(await stub.cancel());
    expect(snap.logs[0]).toMatchObject({ event: "campaign_cancelled", details: { skipped: 3, in_progress: 2 } });
    await carrier.report(b, "completed");
    await advance(3600_000, stub);
    expect(carrier.started).toHaveLength(3);
    const p = unwrap(await stub.progress());
    expect(p).toMatchObject({ state: "cancelled", completed: 1, failed: 1, pending: 2, in_progress: 1 });
    await carrier.report(carrier.open(id)[0], "no_answer"); // finishes and is recorded, never retried
    expect(unwrap(await stub.progress()).in_progress).toBe(0);
    expect(await sqlOf(stub, "SELECT count(*) AS n FROM timers WHERE kind = 'retry'")).toEqual([{ n: 0 }]);
  });
});
