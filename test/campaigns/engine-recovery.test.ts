// Exactly-once under restarts: eviction, an abort mid-dispatch (between recording `dialing` and the carrier's
// answer), reconciliation from the run record; an idempotent alarm; a bad timer row isolated.
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { CampaignObject } from "../../src/campaigns/campaign-object";
import { clock } from "../../src/lib/clock";
import { createOrg } from "../helpers";
import { type FakeCarrier, advance, campaignStub, makeCampaign, resetWorld, simulate, sqlOf, tick } from "./engine-harness";
import { unwrap } from "../../src/campaigns/errors";

let carrier: FakeCarrier;
beforeEach(() => {
  carrier = resetWorld();
});

/** Every (contact, attempt) was asked of the carrier at most once, and no contact more than its attempts. */
function expectNoDoubleDial(campaignId: number) {
  const keys = carrier.started.filter((s) => s.req.campaignId === campaignId).map((s) => `${s.req.contactId}:${s.req.attempt}`);
  expect(new Set(keys).size).toBe(keys.length);
}

describe("restarts", () => {
  it("evicted between events: carries on from storage, nobody dialed twice, nobody lost", async () => {
    const { id, stub } = await makeCampaign({ contacts: 12, settings: { max_concurrency: 3, rate_limit: 2 }, start: true });
    let events = 0;
    await simulate(carrier, [stub], {
      untilMs: clock.now() + 3600_000,
      plan: (s) => ({ durationMs: 5000 + (s.runId % 4) * 1000, outcome: s.runId % 3 === 0 ? "busy" : "completed" }),
      check: async () => {
        if (++events % 3 === 0) await evictDurableObject(stub);
      },
    });
    expectNoDoubleDial(id);
    const snap = unwrap(await stub.snapshot());
    expect(snap.state).toBe("completed");
    expect(snap.counts.total).toBe(12);
    expect(snap.counts.completed + snap.counts.failed).toBe(12);
    expect(events).toBeGreaterThan(10);
  });

  it("aborted mid-dispatch: the attempt recorded `dialing` is reconciled (unknown), never re-dialed; the rest go on", async () => {
    const made = await makeCampaign({ contacts: 4, settings: { max_concurrency: 1, rate_limit: 10 }, start: true });
    const id = made.id;
    carrier.decide = () => "hang"; // the carrier was asked, and the object dies before it hears back
    const alarm = runDurableObjectAlarm(made.stub).catch((e) => e);
    await vi.waitFor(() => expect(carrier.started).toHaveLength(1));
    const stuck = await sqlOf(made.stub, "SELECT contact_id, attempt, status FROM attempts");
    expect(stuck).toEqual([{ contact_id: carrier.started[0].req.contactId, attempt: 1, status: "dialing" }]);
    await abortAllDurableObjects();
    await alarm;
    const stub = campaignStub(id); // stubs of an aborted object are broken: take a fresh one
    carrier.decide = () => ({ ok: true, runId: 0, providerCallId: null });
    // Waking (any call) reconciles before anything else happens.
    const snap = unwrap(await stub.snapshot());
    expect(snap.logs.find((l) => l.event === "attempt_reconciled")).toMatchObject({
      level: "warning",
      details: { contact_id: carrier.started[0].req.contactId, attempt: 1 },
    });
    await simulate(carrier, [stub], { untilMs: clock.now() + 3600_000, plan: () => ({ durationMs: 2000, outcome: "completed" }) });
    expectNoDoubleDial(id);
    expect(carrier.dialsOf(id, carrier.started[0].req.phoneNumber)).toHaveLength(1);
    const done = unwrap(await stub.snapshot());
    expect(done.state).toBe("completed");
    expect(done.counts).toMatchObject({ total: 4, processed: 4, completed: 3, failed: 1, executed: 4, failed_calls: 1 });
    expect(await sqlOf(stub, "SELECT outcome FROM contacts WHERE id = ?", carrier.started[0].req.contactId)).toEqual([{ outcome: "unknown" }]);
  });

  /**
   * A campaign of `contacts` whose object dies while it asks the carrier: the starts under way, a run record written
   * as the calls module would have got as far, and the restart (a fresh stub: an aborted object's are broken).
   */
  async function startsCutShort(contacts: number) {
    const org = await createOrg();
    const wf = await env.DB.prepare("INSERT INTO workflows (org_id, uuid, name) VALUES (?, ?, 'agent') RETURNING id")
      .bind(org.id, crypto.randomUUID())
      .first<{ id: number }>();
    const made = await makeCampaign({ orgId: org.id, contacts, settings: { max_concurrency: contacts, rate_limit: 10 }, start: true });
    carrier.decide = () => "hang";
    const alarm = runDurableObjectAlarm(made.stub).catch((e) => e);
    await vi.waitFor(() => expect(carrier.started).toHaveLength(contacts));
    type Start = (typeof carrier.started)[number];
    return {
      id: made.id,
      starts: carrier.started,
      record: (s: Start, status: string, callId: string | null) =>
        env.DB.prepare(
          "INSERT INTO workflow_runs (org_id, name, workflow_id, workflow_uuid, campaign_id, contact_id, attempt, phone_number, status, provider_call_id) VALUES (?, ?, ?, 'u', ?, ?, 1, ?, ?, ?)",
        )
          .bind(org.id, `WR-R${made.id}-${s.req.contactId}`, wf!.id, made.id, s.req.contactId, s.req.phoneNumber, status, callId)
          .run(),
      restart: async () => {
        await abortAllDurableObjects();
        await alarm;
        carrier.decide = () => ({ ok: true, runId: 0, providerCallId: null });
        return campaignStub(made.id);
      },
    };
  }

  it("a run record that shows the call was placed is adopted: the outcome comes from its status", async () => {
    const { id, starts, record, restart } = await startsCutShort(2);
    const [placed, finished] = starts;
    // The calls module got as far as the carrier for both; one already has its final status.
    await record(placed, "ringing", "prov-1");
    await record(finished, "busy", "prov-2");
    const stub = await restart();
    const rows = await sqlOf<{ contact_id: number; status: string; provider_call_id: string | null }>(
      stub,
      "SELECT contact_id, status, provider_call_id FROM attempts ORDER BY contact_id",
    );
    expect(rows).toEqual([
      { contact_id: placed.req.contactId, status: "in_flight", provider_call_id: "prov-1" },
      { contact_id: finished.req.contactId, status: "busy", provider_call_id: null },
    ]);
    // The busy outcome is retried by policy; the placed call's own status still arrives and is applied.
    const runId = (await sqlOf<{ run_id: number }>(stub, "SELECT run_id FROM attempts WHERE contact_id = ?", placed.req.contactId))[0].run_id;
    expect(
      (await stub.onCallStatus({ runId, contactId: placed.req.contactId, attempt: 1, status: "completed", at: new Date(clock.now()).toISOString() })).applied,
    ).toBe(true);
    await advance(121_000, stub);
    expect(carrier.dialsOf(id, finished.req.phoneNumber).map((s) => s.req.attempt)).toEqual([1, 2]);
    expect(carrier.dialsOf(id, placed.req.phoneNumber)).toHaveLength(1);
  });

  it("a run recorded `initiated` without a call id was created but not known placed: unknown, not dialed again", async () => {
    const { id, starts, record, restart } = await startsCutShort(1);
    // startCampaignCall records its run `initiated` before it asks the carrier, and writes nothing when the carrier
    // accepts: a record like this says nothing about whether the carrier has the call.
    await record(starts[0], "initiated", null);
    const stub = await restart();
    expect(await sqlOf(stub, "SELECT status FROM attempts")).toEqual([{ status: "unknown" }]);
    await advance(3600_000, stub);
    expect(carrier.dialsOf(id, starts[0].req.phoneNumber)).toHaveLength(1);
    expect(unwrap(await stub.snapshot()).state).toBe("completed");
  });
});

describe("the alarm", () => {
  it("is idempotent: delivered twice, it dials nothing twice", async () => {
    const { id, stub } = await makeCampaign({ contacts: 3, settings: { max_concurrency: 3, rate_limit: 10 }, start: true });
    await runInDurableObject(stub, async (instance: CampaignObject) => {
      await instance.alarm();
      await instance.alarm();
    });
    await tick(stub);
    expect(carrier.open(id)).toHaveLength(3);
    expectNoDoubleDial(id);
  });

  it("isolates a timer that throws: others still fire, it is retried, then dropped", async () => {
    const { id, stub } = await makeCampaign({ contacts: 2, settings: { max_concurrency: 2, rate_limit: 10 }, start: true });
    await tick(stub);
    const [a, b] = carrier.open(id);
    await carrier.report(a, "busy");
    await carrier.report(b, "busy");
    // Make one contact's retry timer blow up whenever it fires.
    const bad = a.req.contactId;
    await runInDurableObject(stub, (instance: CampaignObject) => {
      const inst = (instance as unknown as { alarms: { fire: (t: { kind: string; ref: number }, now: number) => Promise<void> } }).alarms;
      const original = inst.fire.bind(inst);
      inst.fire = async (t, now) => {
        if (t.kind === "retry" && t.ref === bad) throw new Error("corrupt row");
        return original(t, now);
      };
    });
    await advance(121_000, stub);
    expect(carrier.dialsOf(id, b.req.phoneNumber)).toHaveLength(2); // the healthy retry fired
    expect(carrier.dialsOf(id, a.req.phoneNumber)).toHaveLength(1);
    const failures = () => stub.logs(100).then((p) => unwrap(p).items.filter((l) => l.event === "timer_failed"));
    expect((await failures())[0]).toMatchObject({ level: "error", details: { kind: "retry", ref: bad, fails: 1 } });
    await advance(20 * 60_000, stub);
    const all = await failures();
    expect(all).toHaveLength(5);
    expect(all[0].message).toMatch(/dropped/);
    expect(await sqlOf(stub, "SELECT count(*) AS n FROM timers WHERE kind = 'retry'")).toEqual([{ n: 0 }]);
  });
});
