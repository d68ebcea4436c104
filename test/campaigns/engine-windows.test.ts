// Schedules: no call starts outside a window, across DST changes in two timezones; retries wait for windows;
// progress shows next_window_at; a PATCH of the schedule takes effect at once.
import { beforeEach, describe, expect, it } from "vitest";
import { clock } from "../../src/lib/clock";
import { type FakeCarrier, advance, makeCampaign, resetWorld, simulate, tick } from "./engine-harness";
import { unwrap } from "../../src/campaigns/errors";

let carrier: FakeCarrier;
beforeEach(() => {
  carrier = resetWorld();
});

/** Local wall time of an instant, computed independently of the engine's schedule code. */
function wall(ms: number, timeZone: string): { dow: number; hhmm: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", { timeZone, weekday: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23" })
      .formatToParts(ms)
      .map((p) => [p.type, p.value]),
  );
  return { dow: ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(parts.weekday), hhmm: `${parts.hour}:${parts.minute}` };
}

const everyDay = (start: string, end: string) => Array.from({ length: 7 }, (_, d) => ({ day_of_week: d, start_time: start, end_time: end }));

describe("calling windows across DST", () => {
  for (const { tz, from, dstDay, before, after } of [
    // New York springs forward on Sunday 2030-03-10; 09:00 local is 14:00Z before and 13:00Z after.
    { tz: "America/New_York", from: "2030-03-08T15:00:00Z", dstDay: "2030-03-10", before: "14:0", after: "13:0" },
    // Berlin springs forward on Sunday 2030-03-31; 09:00 local is 08:00Z before and 07:00Z after.
    { tz: "Europe/Berlin", from: "2030-03-29T09:00:00Z", dstDay: "2030-03-31", before: "08:0", after: "07:0" },
  ])
    it(`${tz}: every call starts inside 09:00–09:10 local, before and after the change`, async () => {
      clock.set(Date.parse(from));
      const { id, stub } = await makeCampaign({
        contacts: 10,
        settings: { max_concurrency: 1, rate_limit: 1, schedule_config: { enabled: true, timezone: tz, slots: everyDay("09:00", "09:10") } },
        start: true,
      });
      const snap = unwrap(await stub.snapshot());
      expect(snap.next_window_at).not.toBeNull();
      expect(snap.logs[0].event).toBe("window_closed");
      // Each call lasts 5 minutes: two fit in a window (09:00, 09:05), so ten contacts take five days and cross the change.
      await simulate(carrier, [stub], {
        untilMs: Date.parse(from) + 7 * 86_400_000,
        plan: () => ({ durationMs: 300_000, outcome: "completed" }),
        check: () => {
          for (const s of carrier.started) {
            const w = wall(s.at, tz);
            expect(w.hhmm >= "09:00" && w.hhmm < "09:10", `${new Date(s.at).toISOString()} is ${w.hhmm} in ${tz}`).toBe(true);
          }
        },
      });
      expect(unwrap(await stub.snapshot()).state).toBe("completed");
      const times = carrier.started.filter((s) => s.req.campaignId === id).map((s) => new Date(s.at).toISOString());
      expect(times).toHaveLength(10);
      const dstStarts = times.filter((t) => t.startsWith(dstDay));
      expect(dstStarts.length).toBe(2);
      expect(dstStarts.every((t) => t.slice(11, 15) === after)).toBe(true);
      expect(times.filter((t) => t < dstDay).every((t) => t.slice(11, 15) === before)).toBe(true);
      const events = unwrap(await stub.logs(100)).items.map((l) => l.event);
      expect(events.filter((e) => e === "window_opened").length).toBeGreaterThanOrEqual(5);
      expect(events.filter((e) => e === "window_closed").length).toBeGreaterThanOrEqual(5);
    });
});

describe("windows and the rest of the engine", () => {
  it("progress shows next_window_at while closed; a PATCH opening the schedule dials at once", async () => {
    clock.set(Date.parse("2030-01-07T20:00:00Z")); // Monday 20:00 UTC
    const { id, stub } = await makeCampaign({
      contacts: 2,
      settings: { rate_limit: 5, schedule_config: { enabled: true, timezone: "UTC", slots: [{ day_of_week: 1, start_time: "09:00", end_time: "17:00" }] } },
      start: true,
    });
    await tick(stub);
    expect(carrier.started).toHaveLength(0);
    expect(unwrap(await stub.progress()).next_window_at).toBe("2030-01-08T09:00:00.000Z");
    await stub.updateSettings({ schedule_config: { enabled: true, timezone: "UTC", slots: [{ day_of_week: 0, start_time: "19:00", end_time: "24:00" }] } });
    await tick(stub);
    expect(carrier.open(id)).toHaveLength(2);
    expect(unwrap(await stub.progress()).next_window_at).toBeNull();
    // And closing it again stops new dials at once (the calls in progress carry on).
    await stub.updateSettings({ schedule_config: { enabled: true, timezone: "UTC", slots: [{ day_of_week: 3, start_time: "09:00", end_time: "10:00" }] } });
    expect(unwrap(await stub.progress()).next_window_at).toBe("2030-01-10T09:00:00.000Z");
  });

  it("a retry is due after the delay and then waits for the next window", async () => {
    clock.set(Date.parse("2030-01-07T16:57:00Z")); // three minutes before the window closes
    const { id, stub } = await makeCampaign({
      contacts: 1,
      settings: { schedule_config: { enabled: true, timezone: "UTC", slots: everyDay("09:00", "17:00") } },
      start: true,
    });
    await tick(stub);
    const first = carrier.open(id)[0];
    clock.set(Date.parse("2030-01-07T16:58:30Z"));
    await carrier.report(first, "no_answer"); // retry due 17:00:30, after the window closed
    await advance(12 * 3600_000, stub); // until 04:58:30 next day
    expect(carrier.started).toHaveLength(1);
    await advance(5 * 3600_000, stub);
    expect(carrier.started).toHaveLength(2);
    expect(new Date(carrier.started[1].at).toISOString()).toBe("2030-01-08T09:00:00.000Z");
    expect(carrier.started[1].req.attempt).toBe(2);
  });
});
