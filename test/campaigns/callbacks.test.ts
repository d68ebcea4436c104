// A callee who asked to be called back (disposition call_back_later with the analysis's callback_at): the campaign
// calls again at that time when it is inside the schedule, at the window's next opening when it is not, and not at all
// without retries left; all through the campaign object's alarms on the test clock.
import { beforeEach, describe, expect, it } from "vitest";
import { callbackDue } from "../../src/campaigns/engine/callbacks";
import { unwrap } from "../../src/campaigns/errors";
import { clock } from "../../src/lib/clock";
import { advance, type FakeCarrier, makeCampaign, phone, resetWorld, sqlOf, T0, tick } from "./engine-harness";

let carrier: FakeCarrier;
beforeEach(() => {
  carrier = resetWorld();
});

// Monday 09:00–17:00 UTC; T0 is Monday 10:00 UTC.
const SCHEDULE = { enabled: true, timezone: "UTC", slots: [1, 2, 3, 4, 5].map((d) => ({ day_of_week: d - 1, start_time: "09:00", end_time: "17:00" })) };
const RETRIES = { enabled: true, max_retries: 2, retry_delay_seconds: 120, retry_on_busy: true, retry_on_no_answer: true, retry_on_voicemail: false };
const iso = (ms: number) => new Date(ms).toISOString();

describe("call_back_later", () => {
  it("retries at the time asked for within the schedule, and at the next window for a time outside it", async () => {
    // A third call still in progress keeps the campaign running while the analyses come in (see the doc's limits).
    const { id, stub } = await makeCampaign({ contacts: 3, settings: { schedule_config: SCHEDULE, retry_config: RETRIES, rate_limit: 5 }, start: true });
    await tick(stub);
    const [a, b, c] = carrier.open(id);
    for (const s of [a, b]) await carrier.report(s, "completed");
    const inside = T0 + 4.5 * 3600_000; // Monday 14:30
    const outside = T0 + 10 * 3600_000; // Monday 20:00, after the window: Tuesday 09:00
    const outcome = (s: typeof a, at: number) => ({
      runId: s.runId,
      contactId: s.req.contactId,
      attempt: 1,
      disposition: "call_back_later",
      callbackAt: iso(at),
    });
    expect(await stub.onRunOutcome(outcome(a, inside))).toEqual({ applied: true });
    expect(await stub.onRunOutcome(outcome(b, outside))).toEqual({ applied: true });
    // A repeat of the message schedules nothing more.
    expect(await stub.onRunOutcome(outcome(a, inside))).toEqual({ applied: false });
    // Both contacts wait, so the campaign does not complete when its last call ends.
    await carrier.report(c, "completed");
    expect(unwrap(await stub.snapshot()).state).toBe("running");

    await advance(inside - clock.now() - 1000, stub);
    expect(carrier.dialsOf(id, phone(0))).toHaveLength(1);
    await advance(1000, stub);
    const again = carrier.dialsOf(id, phone(0));
    expect(again).toHaveLength(2);
    expect(again[1]).toMatchObject({ at: inside, req: { attempt: 2 } });

    await advance(Date.parse("2030-01-08T09:00:00Z") - clock.now(), stub);
    const later = carrier.dialsOf(id, phone(1));
    expect(later).toHaveLength(2);
    expect(iso(later[1].at)).toBe("2030-01-08T09:00:00.000Z");

    const logs = await sqlOf(stub, "SELECT event, details FROM logs WHERE event = 'callback_scheduled' ORDER BY id");
    expect(logs).toHaveLength(2);
  });

  it("without retries left, or retries off, the callback is logged as not scheduled and the campaign completes", async () => {
    const { id, stub } = await makeCampaign({ contacts: 1, settings: { retry_config: { ...RETRIES, max_retries: 0 } }, start: true });
    await tick(stub);
    const [a] = carrier.open(id);
    // The disposition may come before the carrier's final status: the contact is not reopened either way.
    const res = await stub.onRunOutcome({
      runId: a.runId,
      contactId: a.req.contactId,
      attempt: 1,
      disposition: "call_back_later",
      callbackAt: iso(T0 + 3600_000),
    });
    expect(res).toEqual({ applied: true }); // the disposition itself is recorded
    await carrier.report(a, "completed");
    await advance(2 * 3600_000, stub);
    expect(carrier.dialsOf(id, phone(0))).toHaveLength(1);
    expect(unwrap(await stub.snapshot()).state).toBe("completed");
    const [log] = await sqlOf(stub, "SELECT message FROM logs WHERE event = 'callback_not_scheduled'");
    expect(log.message).toMatch(/asked to be called back at 2030-01-07T11:00:00.000Z, but the contact had its 0 retries/);
  });

  it("callbackDue: past times are due now; retries off, none left, a non-time or beyond 30 days are refused", () => {
    const now = T0;
    expect(callbackDue(iso(now - 5000), 1, RETRIES, now)).toEqual({ due: now });
    expect(callbackDue(iso(now + 60_000), 1, RETRIES, now)).toEqual({ due: now + 60_000 });
    expect(callbackDue(iso(now + 60_000), 3, RETRIES, now)).toEqual({ refused: "the contact had its 2 retries" });
    expect(callbackDue(iso(now + 60_000), 1, { ...RETRIES, enabled: false }, now)).toEqual({ refused: "retries are disabled" });
    expect(callbackDue("tomorrow", 1, RETRIES, now)).toEqual({ refused: "'tomorrow' is not a time" });
    expect(callbackDue(iso(now + 31 * 86_400_000), 1, RETRIES, now)).toEqual({ refused: "the time is more than 30 days ahead" });
  });
});
