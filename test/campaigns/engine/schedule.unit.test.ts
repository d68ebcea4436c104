import { describe, expect, it } from "vitest";
import { Schedule, offsetAt, zonedInstant } from "../../../src/campaigns/engine/schedule";

const Z = (s: string) => Date.parse(s);
const sched = (timezone: string, slots: [number, string, string][]) =>
  new Schedule({ enabled: true, timezone, slots: slots.map(([day_of_week, start_time, end_time]) => ({ day_of_week, start_time, end_time })) });

// 2030-01-07 is a Monday.
describe("schedule: slots in UTC", () => {
  const s = sched("UTC", [[0, "09:00", "17:00"]]);
  it("start is inclusive, end exclusive", () => {
    expect(s.isOpen(Z("2030-01-07T08:59:59Z"))).toBe(false);
    expect(s.isOpen(Z("2030-01-07T09:00:00Z"))).toBe(true);
    expect(s.isOpen(Z("2030-01-07T16:59:59Z"))).toBe(true);
    expect(s.isOpen(Z("2030-01-07T17:00:00Z"))).toBe(false);
    expect(s.isOpen(Z("2030-01-08T10:00:00Z"))).toBe(false); // Tuesday
  });
  it("next opening is the next slot start, a week away if need be", () => {
    expect(s.nextOpening(Z("2030-01-07T08:00:00Z"))).toBe(Z("2030-01-07T09:00:00Z"));
    expect(s.nextOpening(Z("2030-01-07T17:00:00Z"))).toBe(Z("2030-01-14T09:00:00Z"));
    expect(s.nextOpening(Z("2030-01-07T10:00:00Z"))).toBe(Z("2030-01-07T10:00:00Z"));
    expect(s.nextClosing(Z("2030-01-07T10:00:00Z"))).toBe(Z("2030-01-07T17:00:00Z"));
    expect(s.nextChange(Z("2030-01-07T17:00:00Z"))).toBe(Z("2030-01-14T09:00:00Z"));
  });
  it("24:00 ends at midnight and joins a slot starting at 00:00 the next day", () => {
    const m = sched("UTC", [
      [0, "22:00", "24:00"],
      [1, "00:00", "02:00"],
    ]);
    expect(m.isOpen(Z("2030-01-07T23:59:00Z"))).toBe(true);
    expect(m.isOpen(Z("2030-01-08T00:00:00Z"))).toBe(true);
    expect(m.nextClosing(Z("2030-01-07T23:00:00Z"))).toBe(Z("2030-01-08T02:00:00Z"));
    const alone = sched("UTC", [[6, "20:00", "24:00"]]); // Sunday evening
    expect(alone.nextClosing(Z("2030-01-13T21:00:00Z"))).toBe(Z("2030-01-14T00:00:00Z"));
    expect(alone.isOpen(Z("2030-01-14T00:00:00Z"))).toBe(false);
  });
  it("a disabled or absent schedule is always open", () => {
    expect(new Schedule(null).isOpen(0)).toBe(true);
    expect(
      new Schedule({ enabled: false, timezone: "UTC", slots: [{ day_of_week: 0, start_time: "09:00", end_time: "10:00" }] }).isOpen(Z("2030-01-08T00:00:00Z")),
    ).toBe(true);
    expect(new Schedule(null).nextChange(0)).toBeNull();
  });
});

describe("schedule: timezones and DST", () => {
  it("uses the zone's wall clock (fixed offsets too)", () => {
    const k = sched("Asia/Kolkata", [[0, "09:00", "17:00"]]); // +05:30
    expect(k.nextOpening(Z("2030-01-07T00:00:00Z"))).toBe(Z("2030-01-07T03:30:00Z"));
    expect(k.isOpen(Z("2030-01-07T11:29:00Z"))).toBe(true);
    expect(k.isOpen(Z("2030-01-07T11:30:00Z"))).toBe(false);
  });
  it("New York: the same local slot moves by an hour across the spring change", () => {
    // 2030-03-10 (Sunday) 02:00 EST → 03:00 EDT.
    const ny = sched("America/New_York", [[6, "09:00", "17:00"]]);
    expect(ny.nextOpening(Z("2030-03-03T00:00:00Z"))).toBe(Z("2030-03-03T14:00:00Z")); // EST
    expect(ny.nextOpening(Z("2030-03-04T00:00:00Z"))).toBe(Z("2030-03-10T13:00:00Z")); // EDT
    expect(ny.isOpen(Z("2030-03-10T13:30:00Z"))).toBe(true);
    expect(ny.isOpen(Z("2030-03-03T13:30:00Z"))).toBe(false);
  });
  it("New York: a slot starting inside the skipped hour opens at the jump", () => {
    const ny = sched("America/New_York", [[6, "02:30", "04:00"]]);
    expect(ny.nextOpening(Z("2030-03-10T05:00:00Z"))).toBe(Z("2030-03-10T07:00:00Z")); // local 03:00 EDT
    expect(ny.isOpen(Z("2030-03-10T06:59:59Z"))).toBe(false); // local 01:59 EST
    expect(ny.nextClosing(Z("2030-03-10T07:00:00Z"))).toBe(Z("2030-03-10T08:00:00Z")); // local 04:00 EDT
    const early = sched("America/New_York", [[6, "00:00", "02:30"]]);
    expect(early.nextClosing(Z("2030-03-10T06:00:00Z"))).toBe(Z("2030-03-10T07:00:00Z")); // ends at the jump
  });
  it("New York: the repeated hour in autumn opens a slot twice", () => {
    // 2030-11-03 (Sunday) 02:00 EDT → 01:00 EST.
    const ny = sched("America/New_York", [[6, "01:00", "01:30"]]);
    expect(ny.nextOpening(Z("2030-11-03T00:00:00Z"))).toBe(Z("2030-11-03T05:00:00Z"));
    expect(ny.nextClosing(Z("2030-11-03T05:00:00Z"))).toBe(Z("2030-11-03T05:30:00Z"));
    expect(ny.nextOpening(Z("2030-11-03T05:30:00Z"))).toBe(Z("2030-11-03T06:00:00Z"));
    expect(ny.nextClosing(Z("2030-11-03T06:00:00Z"))).toBe(Z("2030-11-03T06:30:00Z"));
  });
  it("Berlin: spring change on another date than New York's", () => {
    // 2030-03-31 (Sunday) 02:00 CET → 03:00 CEST.
    const be = sched("Europe/Berlin", [
      [6, "02:30", "03:30"],
      [0, "09:00", "10:00"],
    ]);
    expect(be.nextOpening(Z("2030-03-30T12:00:00Z"))).toBe(Z("2030-03-31T01:00:00Z"));
    expect(be.nextClosing(Z("2030-03-31T01:00:00Z"))).toBe(Z("2030-03-31T01:30:00Z"));
    expect(be.nextOpening(Z("2030-03-31T01:30:00Z"))).toBe(Z("2030-04-01T07:00:00Z")); // Monday 09:00 CEST
    expect(be.nextOpening(Z("2030-03-24T12:00:00Z"))).toBe(Z("2030-03-25T08:00:00Z")); // Monday 09:00 CET
  });
  it("zonedInstant resolves ambiguous times to the earlier instant and skipped ones to the jump", () => {
    expect(zonedInstant(2030, 11, 3, 90, "America/New_York")).toBe(Z("2030-11-03T05:30:00Z"));
    expect(zonedInstant(2030, 3, 10, 150, "America/New_York")).toBe(Z("2030-03-10T07:00:00Z"));
    expect(zonedInstant(2030, 1, 7, 1440, "UTC")).toBe(Z("2030-01-08T00:00:00Z"));
    expect(offsetAt(Z("2030-07-01T00:00:00Z"), "America/New_York")).toBe(-4 * 3600_000);
  });
  it("at every minute around both changes, isOpen agrees with the local wall clock", () => {
    const schedules = [
      sched("America/New_York", [[6, "01:00", "03:30"]]),
      sched("America/New_York", [
        [6, "01:00", "01:30"],
        [6, "02:15", "02:45"],
      ]),
    ];
    for (const ny of schedules)
      for (const day of ["2030-03-10", "2030-11-03"]) {
        let t = Z(`${day}T03:00:00Z`);
        const end = Z(`${day}T10:00:00Z`);
        let open = ny.isOpen(t);
        while (t < end) {
          const change = ny.nextChange(t)!;
          // Nothing changes before the predicted instant, and it does change there.
          for (let u = t; u < Math.min(change, end); u += 60_000) expect(ny.isOpen(u)).toBe(open);
          if (change >= end) break;
          expect(ny.isOpen(change)).toBe(!open);
          t = change;
          open = !open;
        }
      }
  });
});
