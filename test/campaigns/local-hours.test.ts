// The recipient's local hours over one or several zones: open only when every zone is within hours, the next
// opening and closing as instants (DST included), and the setting turned off. Then a campaign at the window's exact
// edges, driven by the engine harness, whose loops are bounded (an alarm that keeps re-arming without progress fails
// in seconds instead of hanging the worker, where the per-test time limit cannot stop it).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ZoneHours } from "../../src/campaigns/engine/local-hours";
import { clock } from "../../src/lib/clock";
import { DEFAULT_LOCAL_HOURS } from "../../src/telephony/calling-rules";
import { call, createOrg } from "../helpers";
import { type FakeCarrier, advance, makeCampaign, phone, resetWorld, tick } from "./engine-harness";
import { unwrap } from "../../src/campaigns/errors";

const at = (iso: string) => Date.parse(iso);

describe("local hours", () => {
  it("one zone: 08:00 to 21:00 local, start inclusive, end exclusive", () => {
    const ny = new ZoneHours("America/New_York", DEFAULT_LOCAL_HOURS);
    // January: New York is UTC-5.
    expect(ny.isOpen(at("2030-01-07T12:59:59Z"))).toBe(false);
    expect(ny.isOpen(at("2030-01-07T13:00:00Z"))).toBe(true);
    expect(ny.isOpen(at("2030-01-08T01:59:59Z"))).toBe(true);
    expect(ny.isOpen(at("2030-01-08T02:00:00Z"))).toBe(false);
    expect(ny.at(at("2030-01-07T10:00:00Z"))).toEqual({ open: false, change: at("2030-01-07T13:00:00Z") });
    expect(ny.at(at("2030-01-07T15:00:00Z"))).toEqual({ open: true, change: at("2030-01-08T02:00:00Z") });
    // July: UTC-4.
    expect(ny.at(at("2030-07-08T10:00:00Z")).change).toBe(at("2030-07-08T12:00:00Z"));
  });

  it("several zones: only the hours they share", () => {
    // New York 08:00–21:00 is 13:00–02:00 UTC; Los Angeles 16:00–05:00 UTC: together 16:00–02:00 UTC.
    const both = new ZoneHours("America/Los_Angeles&America/New_York", DEFAULT_LOCAL_HOURS);
    expect(both.isOpen(at("2030-01-07T14:00:00Z"))).toBe(false);
    expect(both.at(at("2030-01-07T14:00:00Z"))).toEqual({ open: false, change: at("2030-01-07T16:00:00Z") });
    expect(both.at(at("2030-01-07T20:00:00Z"))).toEqual({ open: true, change: at("2030-01-08T02:00:00Z") });
    // Zones whose hours never meet (Honolulu 18:00–20:00 UTC, Paris 07:00–09:00 UTC): never open.
    const apart = new ZoneHours("Europe/Paris&Pacific/Honolulu", { enabled: true, start: "08:00", end: "10:00" });
    expect(apart.at(at("2030-01-07T00:00:00Z"))).toEqual({ open: false, change: null });
  });

  it("custom hours, and off: always open", () => {
    const paris = new ZoneHours("Europe/Paris", { enabled: true, start: "09:30", end: "18:00" });
    expect(paris.isOpen(at("2030-01-07T08:29:00Z"))).toBe(false);
    expect(paris.isOpen(at("2030-01-07T08:30:00Z"))).toBe(true);
    const off = new ZoneHours("Europe/Paris", { ...DEFAULT_LOCAL_HOURS, enabled: false });
    expect(off.at(at("2030-01-07T03:00:00Z"))).toEqual({ open: true, change: null });
    expect(new ZoneHours("", DEFAULT_LOCAL_HOURS).at(0)).toEqual({ open: true, change: null });
  });
});

describe("a campaign at the edges of the local hours", () => {
  let carrier: FakeCarrier;
  beforeEach(() => {
    carrier = resetWorld();
  });
  afterEach(() => clock.set(null));

  it("nothing starts at 21:00:00 local; the held contact is dialed at 08:00:00 local, not a moment before", async () => {
    // San Francisco numbers (+1 415), January: UTC-8. 21:00 local is 05:00 UTC, 08:00 local is 16:00 UTC.
    const closes = Date.parse("2030-01-08T05:00:00Z");
    const opens = Date.parse("2030-01-08T16:00:00Z");
    const org = await createOrg();
    const put = await call("PUT", "/api/v1/organizations/calling-policy", { key: org.key, body: { local_hours: { start: "08:00", end: "21:00" } } });
    expect(put.status, put.text).toBe(200);
    clock.set(closes - 60_000); // 20:59 local
    const { id, stub } = await makeCampaign({ contacts: 2, orgId: org.id, settings: { rate_limit: 10, max_concurrency: 1 }, start: true });
    await tick(stub);
    expect(carrier.started.map((s) => s.req.phoneNumber)).toEqual([phone(0)]);

    // The first call ends at 21:00:00 exactly: its freed slot is not used, the zone has just closed.
    clock.set(closes);
    await carrier.report(carrier.open(id)[0], "completed", closes);
    await tick(stub);
    expect(carrier.dialsOf(id, phone(1))).toEqual([]);
    expect(unwrap(await stub.progress()).calling_rules).toMatchObject({ held_local_hours: 1 });

    await advance(opens - 1 - clock.now(), stub);
    expect(carrier.dialsOf(id, phone(1))).toEqual([]);
    await advance(1, stub);
    expect(carrier.dialsOf(id, phone(1)).map((s) => s.at)).toEqual([opens]);
  });
});
