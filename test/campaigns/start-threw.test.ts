// A call start that throws (the carrier request may have gone out before the failure) is never dialed again: the
// attempt ends `unknown` with the error kept, the contact is done with outcome `unknown` whatever the retry settings,
// the failure is logged, and the slot and the organization's lease come back so the campaign goes on.
import { beforeEach, describe, expect, it } from "vitest";
import { clock } from "../../src/lib/clock";
import { type CampaignStub, type FakeCarrier, alarmAt, makeCampaign, orgStub, phone, resetWorld, simulate, sqlOf, tick } from "./engine-harness";
import { unwrap } from "../../src/campaigns/errors";

let carrier: FakeCarrier;

/**
 * Moves the clock `ms` ahead alarm by alarm, as the harness's advance() does, but stops as soon as `redialed` says a
 * contact was dialed again, and fails after `maxAlarms`: a bug that redials in a loop fails in seconds, not after a
 * day of simulated redials.
 */
async function runFor(ms: number, stub: CampaignStub, redialed: () => boolean, maxAlarms = 500): Promise<void> {
  const target = clock.now() + ms;
  for (let i = 0; i < maxAlarms; i++) {
    await tick(stub);
    if (redialed()) return;
    const next = await alarmAt(stub);
    if (next == null || next > target) {
      clock.set(target);
      await tick(stub);
      return;
    }
    clock.set(Math.max(clock.now(), next));
  }
  throw new Error(`still running alarms after ${maxAlarms}`);
}

beforeEach(() => {
  carrier = resetWorld();
});

// Every outcome retried, many times, soon: if a throw were recorded as anything retryable it would be dialed again.
const RETRY_ALL = { enabled: true, max_retries: 5, retry_delay_seconds: 30, retry_on_busy: true, retry_on_no_answer: true, retry_on_voicemail: true };

describe("a call start that threw", () => {
  it("is not redialed: the attempt ends unknown, the contact is done, the next contact is dialed", async () => {
    const { id, orgId, stub } = await makeCampaign({
      contacts: 3,
      settings: { rate_limit: 10, max_concurrency: 1, retry_config: RETRY_ALL },
      start: true,
    });
    carrier.decide = (req) => (req.phoneNumber === phone(0) ? "throw" : { ok: true, runId: 0, providerCallId: null });
    await simulate(carrier, [stub], {
      untilMs: clock.now() + 24 * 3600_000,
      plan: () => ({ durationMs: 5000, outcome: "completed" }),
      // A redial of the contact whose start threw ends the run at once (the assertions below then fail).
      stop: () => carrier.dialsOf(id, phone(0)).length > 1,
    });

    // One dial of the contact whose start threw, in a whole day with every retry on; the others were dialed once each.
    expect(carrier.dialsOf(id, phone(0))).toHaveLength(1);
    expect(carrier.dialsOf(id, phone(1))).toHaveLength(1);
    expect(carrier.dialsOf(id, phone(2))).toHaveLength(1);
    expect(carrier.started[0].req.phoneNumber).toBe(phone(0));

    const [contact] = await sqlOf(stub, "SELECT status, attempts, outcome FROM contacts WHERE phone_number = ?", phone(0));
    expect(contact).toEqual({ status: "done", attempts: 1, outcome: "unknown" });
    const attempts = await sqlOf(
      stub,
      "SELECT a.attempt, a.status, a.error, a.ended_at FROM attempts a JOIN contacts c ON c.id = a.contact_id WHERE c.phone_number = ?",
      phone(0),
    );
    expect(attempts).toEqual([{ attempt: 1, status: "unknown", error: "Error: carrier exploded", ended_at: expect.any(Number) }]);
    expect(await sqlOf(stub, "SELECT count(*) AS n FROM timers WHERE kind IN ('retry', 'timeout')")).toEqual([{ n: 0 }]);

    const snap = unwrap(await stub.snapshot());
    expect(snap.state).toBe("completed");
    const failed = snap.logs.filter((l) => l.event === "dial_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: "error", details: { phone_number: phone(0), attempt: 1, error: "Error: carrier exploded" } });
    expect(failed[0].message).toMatch(/may have been placed, so it is not retried/);
    expect((await orgStub(orgId).usage()).inUse).toBe(0);
  });

  it("ends the contact even when it was a retry: a busy first call is retried, the retry's throw is not", async () => {
    const { id, stub } = await makeCampaign({ contacts: 1, settings: { rate_limit: 10, max_concurrency: 1, retry_config: RETRY_ALL }, start: true });
    await tick(stub);
    expect(carrier.started).toHaveLength(1);
    await carrier.report(carrier.open(id)[0], "busy");
    carrier.decide = () => "throw";
    await runFor(31_000, stub, () => carrier.dialsOf(id, phone(0)).length > 2);
    expect(carrier.dialsOf(id, phone(0)).map((s) => s.req.attempt)).toEqual([1, 2]);
    await runFor(24 * 3600_000, stub, () => carrier.dialsOf(id, phone(0)).length > 2);
    expect(carrier.dialsOf(id, phone(0))).toHaveLength(2);
    expect(await sqlOf(stub, "SELECT attempt, status FROM attempts ORDER BY attempt")).toEqual([
      { attempt: 1, status: "busy" },
      { attempt: 2, status: "unknown" },
    ]);
    expect(await sqlOf(stub, "SELECT status, outcome FROM contacts")).toEqual([{ status: "done", outcome: "unknown" }]);
    expect(unwrap(await stub.snapshot()).state).toBe("completed");
  });

  it("a throw while other starts of the same round succeed leaves those calls alone", async () => {
    const { id, stub } = await makeCampaign({ contacts: 4, settings: { rate_limit: 50, max_concurrency: 4, retry_config: RETRY_ALL }, start: true });
    carrier.decide = (req) => (req.phoneNumber === phone(2) ? "throw" : { ok: true, runId: 0, providerCallId: null });
    await tick(stub);
    expect(carrier.started).toHaveLength(4);
    // The three accepted calls are in flight; the one that threw is over.
    expect(await sqlOf(stub, "SELECT c.phone_number, a.status FROM attempts a JOIN contacts c ON c.id = a.contact_id ORDER BY c.phone_number")).toEqual([
      { phone_number: phone(0), status: "in_flight" },
      { phone_number: phone(1), status: "in_flight" },
      { phone_number: phone(2), status: "unknown" },
      { phone_number: phone(3), status: "in_flight" },
    ]);
    for (const s of carrier.open(id).filter((s) => s.req.phoneNumber !== phone(2))) await carrier.report(s, "no_answer");
    await runFor(24 * 3600_000, stub, () => carrier.dialsOf(id, phone(2)).length > 1);
    // The no-answers are retried up to max_retries; the throw never is.
    expect(carrier.dialsOf(id, phone(2))).toHaveLength(1);
    expect(carrier.dialsOf(id, phone(0)).length).toBeGreaterThan(1);
  });
});
