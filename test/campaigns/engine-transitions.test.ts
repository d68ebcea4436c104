// The state machine through the object's RPCs, completion, timeouts, and idempotent call statuses.
import { beforeEach, describe, expect, it } from "vitest";
import { MAX_CALL_SECONDS, TIMEOUT_GRACE_SECONDS } from "../../src/calls/campaign/call-length";
import { clock } from "../../src/lib/clock";
import { type FakeCarrier, advance, errorOf, makeCampaign, orgStub, resetWorld, sqlOf, tick, type CampaignStub } from "./engine-harness";
import { unwrap } from "../../src/campaigns/errors";

let carrier: FakeCarrier;
beforeEach(() => {
  carrier = resetWorld();
});

type Op = "start" | "pause" | "resume" | "cancel";
const ops: Op[] = ["start", "pause", "resume", "cancel"];

/** A campaign brought into `state` through the operations themselves. */
async function inState(state: string): Promise<CampaignStub> {
  const { stub } = await makeCampaign({ contacts: state === "completed" ? 0 : 2 });
  if (state === "running" || state === "paused") await stub.start();
  if (state === "paused") await stub.pause();
  if (state === "completed") await stub.start();
  if (state === "cancelled") await stub.cancel();
  if (state === "failed") await stub.failSource("R2 object vanished");
  expect(unwrap(await stub.snapshot()).state).toBe(state);
  return stub;
}

describe("transitions", () => {
  const table: Record<string, Partial<Record<Op, string>>> = {
    draft: { start: "running", cancel: "cancelled" },
    running: { pause: "paused", cancel: "cancelled" },
    paused: { start: "running", resume: "running", cancel: "cancelled" },
    completed: {},
    cancelled: {},
    failed: {},
  };
  for (const [from, allowed] of Object.entries(table))
    for (const op of ops)
      it(`${from} + ${op} → ${allowed[op] ?? "409"}`, async () => {
        const stub = await inState(from);
        if (allowed[op]) {
          const snap = unwrap(await stub[op]());
          expect(snap.state).toBe(allowed[op]);
          const event = {
            start: from === "paused" ? "campaign_resumed" : "campaign_started",
            pause: "campaign_paused",
            resume: "campaign_resumed",
            cancel: "campaign_cancelled",
          }[op];
          expect(snap.logs[0].event).toBe(event);
        } else {
          expect(await errorOf(stub[op]())).toBe(`[409] Cannot ${op} a campaign in state '${from}'`);
          expect(unwrap(await stub.snapshot()).state).toBe(from);
        }
      });

  it("source failure: draft and running fail (logged), finished states refuse", async () => {
    for (const from of ["draft", "running"]) {
      const stub = await inState(from);
      const snap = unwrap(await stub.failSource("unreadable"));
      expect(snap.state).toBe("failed");
      expect(snap.logs.map((l) => l.event).slice(0, 2)).toEqual(["campaign_failed", "source_sync_failed"]);
      expect(unwrap(await stub.progress()).source_sync).toMatchObject({ status: "failed", error: "unreadable" });
    }
    expect(await errorOf((await inState("paused")).failSource("x"))).toBe("[409] Cannot fail a campaign in state 'paused'");
  });

  it("an empty campaign completes the moment it starts", async () => {
    const { stub } = await makeCampaign({ contacts: 0 });
    const snap = unwrap(await stub.start());
    expect(snap.state).toBe("completed");
    expect(snap.completed_at).toBe(new Date(clock.now()).toISOString());
  });
});

describe("completion", () => {
  it("happens with the last contact's final status, without waiting for an alarm", async () => {
    const { id, stub } = await makeCampaign({ contacts: 3, settings: { rate_limit: 10 }, start: true });
    await tick(stub);
    const [a, b, c] = carrier.open(id);
    await carrier.report(a, "completed");
    await carrier.report(b, "declined");
    expect(unwrap(await stub.snapshot()).state).toBe("running");
    clock.advance(1234);
    await carrier.report(c, "completed");
    const snap = unwrap(await stub.snapshot());
    expect(snap.state).toBe("completed");
    expect(snap.completed_at).toBe(new Date(clock.now()).toISOString());
    expect(snap.counts).toMatchObject({ total: 3, processed: 3, completed: 2, failed: 1, pending: 0, in_progress: 0, executed: 3, queued: 3, failed_calls: 1 });
    expect(snap.logs[0]).toMatchObject({ event: "campaign_completed", details: { total: 3, completed: 2, failed: 1 } });
  });

  it("waits for a pending retry, then completes when the retry ends", async () => {
    const { id, stub } = await makeCampaign({ contacts: 1, settings: { rate_limit: 10 }, start: true });
    await tick(stub);
    await carrier.report(carrier.open(id)[0], "busy");
    expect(unwrap(await stub.snapshot()).state).toBe("running");
    await advance(120_000, stub);
    await carrier.report(carrier.open(id)[0], "completed");
    expect(unwrap(await stub.snapshot()).state).toBe("completed");
  });
});

describe("call statuses", () => {
  it("duplicates, reorderings and late statuses after a final one change nothing", async () => {
    const { id, stub } = await makeCampaign({ contacts: 2, settings: { rate_limit: 10 }, start: true });
    await tick(stub);
    const [a, b] = carrier.open(id);
    expect((await carrier.report(a, "in_progress")).applied).toBe(true);
    expect((await carrier.report(a, "ringing")).applied).toBe(false); // behind in_progress
    expect((await carrier.report(a, "completed")).applied).toBe(true);
    const before = unwrap(await stub.snapshot());
    const attemptsBefore = await sqlOf(stub, "SELECT * FROM attempts ORDER BY id");
    const timersBefore = await sqlOf(stub, "SELECT kind, ref, due FROM timers ORDER BY kind, ref");
    for (const late of ["completed", "busy", "ringing", "failed", "unknown", "in_progress"] as const)
      expect((await carrier.report(a, late)).applied).toBe(false);
    expect(await sqlOf(stub, "SELECT * FROM attempts ORDER BY id")).toEqual(attemptsBefore);
    expect(await sqlOf(stub, "SELECT kind, ref, due FROM timers ORDER BY kind, ref")).toEqual(timersBefore);
    const after = unwrap(await stub.snapshot());
    expect(after.counts).toEqual(before.counts);
    expect(after.logs).toEqual(before.logs);
    // b: a busy (retried later), then a duplicate busy: still one retry, one failed call.
    await carrier.report(b, "busy");
    await carrier.report(b, "busy");
    expect(unwrap(await stub.snapshot()).counts).toMatchObject({ failed_calls: 1, awaiting_retry: 1, executed: 2 });
    expect(await sqlOf(stub, "SELECT count(*) AS n FROM timers WHERE kind = 'retry'")).toEqual([{ n: 1 }]);
  });

  it("a status for an attempt the object does not know is ignored and logged, never a crash", async () => {
    const { stub } = await makeCampaign({ contacts: 1, start: true });
    const r = await stub.onCallStatus({ runId: 999, contactId: 4242, attempt: 1, status: "completed", at: new Date(clock.now()).toISOString() });
    expect(r.applied).toBe(false);
    const snap = unwrap(await stub.snapshot());
    expect(snap.logs[0]).toMatchObject({ event: "call_status_ignored", level: "warning", details: { contact_id: 4242, run_id: 999 } });
    expect(snap.counts.executed).toBe(0);
    // A bogus status value and a bogus timestamp are harmless too.
    await tick(stub);
    const [s] = carrier.open(snap.id);
    expect((await stub.onCallStatus({ runId: s.runId, contactId: s.req.contactId, attempt: 1, status: "exploded" as never, at: "yesterday" })).applied).toBe(
      false,
    );
    expect((await stub.onCallStatus({ runId: s.runId + 1000, contactId: s.req.contactId, attempt: 1, status: "completed", at: "x" })).applied).toBe(false);
    expect((await stub.onCallStatus({ runId: s.runId, contactId: s.req.contactId, attempt: 1, status: "completed", at: "not a date" })).applied).toBe(true);
  });
});

describe("call timeout", () => {
  it("a call with no final status frees its slot after max_call_seconds + grace: unknown, logged, not retried", async () => {
    const { id, orgId, stub } = await makeCampaign({ contacts: 2, settings: { max_concurrency: 1 }, start: true });
    await tick(stub);
    const [first] = carrier.open(id);
    expect((await orgStub(orgId).usage()).inUse).toBe(1);
    await advance((MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS) * 1000 - 1000, stub);
    expect(carrier.started).toHaveLength(1);
    await advance(1000, stub);
    expect(carrier.started).toHaveLength(2); // the slot freed and the next contact dialed
    const snap = unwrap(await stub.snapshot());
    expect(snap.logs.find((l) => l.event === "call_timed_out")).toMatchObject({ level: "warning", details: { contact_id: first.req.contactId, attempt: 1 } });
    expect(await sqlOf(stub, "SELECT status, outcome FROM contacts WHERE id = ?", first.req.contactId)).toEqual([{ status: "done", outcome: "unknown" }]);
    // The carrier's late word changes nothing.
    expect((await carrier.report(first, "busy")).applied).toBe(false);
    expect(await sqlOf(stub, "SELECT count(*) AS n FROM timers WHERE kind = 'retry'")).toEqual([{ n: 0 }]);
    expect((await orgStub(orgId).usage()).inUse).toBe(1); // only the second call's lease
  });
});
