// A seeded simulation of the calling rules across three campaigns that share their numbers: contacts in ten zones
// (and some with their own `timezone`), a suppression list that grows while the campaigns run, an attempt cap
// across campaigns, retries and a campaign schedule, with the organization's real coordinator deciding every dial.
// At every dial: the recipient's local time is within hours, the number is not suppressed, and the cap holds.
// `npm run test:slow` runs it to 10,000+ calls.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import type { ContactInput } from "../../src/campaigns/engine/object-api";
import { clock } from "../../src/lib/clock";
import { numberZoneKey } from "../../src/telephony/number-zones";
import type { CallStatus } from "../../src/telephony/providers/types";
import { setCallStarter } from "../../src/campaigns/engine/call-starter";
import { unwrap } from "../../src/campaigns/errors";
import { call, createOrg } from "../helpers";
import { T0, campaignStub, orgStub, resetWorld, simulate, uniqueId, type CampaignStub, type Started } from "./engine-harness";
import { prng } from "./prng";
import { DEFAULT_SETTINGS, type CampaignSettings } from "../../src/campaigns/engine/settings";

const SEED = 0x7a1e5;
const SLOW = (env as unknown as { SIMULATION_CALLS?: string }).SIMULATION_CALLS === "10000";
const TARGET_CALLS = SLOW ? 10_000 : 200;
const HOURS = { start: "08:00", end: "21:00" };
const CAP = { max_attempts: 2, window_hours: 6 };

/** Number prefixes and the zone the test believes they are in. */
const ZONES: [string, string][] = [
  ["+1212555", "America/New_York"],
  ["+1312555", "America/Chicago"],
  ["+1303555", "America/Denver"],
  ["+1415555", "America/Los_Angeles"],
  ["+1602555", "America/Phoenix"],
  ["+1808555", "Pacific/Honolulu"],
  ["+44207946", "Europe/London"],
  ["+3314555", "Europe/Paris"],
  ["+813555", "Asia/Tokyo"],
  ["+612955", "Australia/Sydney"],
];
const OWN_ZONES = ["Asia/Kolkata", "America/Sao_Paulo", "Africa/Lagos"];

/** The local minutes of the day at `ms` in `tz`, read directly from Intl (not the engine's schedule code). */
function localMinutes(ms: number, tz: string): number {
  const parts = new Intl.DateTimeFormat("en-GB", { timeZone: tz, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).formatToParts(ms);
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  return get("hour") * 60 + get("minute");
}
const within = (ms: number, tz: string) => {
  const m = localMinutes(ms, tz);
  return m >= 8 * 60 && m < 21 * 60;
};

afterEach(() => {
  setCallStarter(null);
  clock.set(null);
});

describe("calling rules simulation", () => {
  it(`over ${TARGET_CALLS}+ calls: none outside local hours, none to a suppressed number, none over the cap`, { timeout: 1_800_000 }, async () => {
    const r = prng(SEED);
    const carrier = resetWorld();
    clock.set(T0);
    const org = await createOrg();
    const put = await call("PUT", "/api/v1/organizations/calling-policy", { key: org.key, body: { local_hours: HOURS, attempt_cap: CAP } });
    expect(put.status, put.text).toBe(200);

    // The contacts: one pool of numbers shared by the campaigns; a few carry their own zone.
    const perCampaign = Math.ceil(TARGET_CALLS / 3 / 1.5);
    const zoneOf = new Map<string, string>();
    const pool: ContactInput[] = [];
    for (let i = 0; i < perCampaign; i++) {
      const [prefix, zone] = ZONES[i % ZONES.length];
      const number = `${prefix}${String(i).padStart(4, "0")}`;
      expect(numberZoneKey(number), number).toBe(zone);
      const own = r.chance(0.05) ? r.pick(OWN_ZONES) : null;
      zoneOf.set(number, own ?? zone);
      pool.push({ row: i + 2, phone_number: number, initial_context: own ? { timezone: own } : {}, greeting_override: null });
    }

    // 5% suppressed before the start; more while the campaigns run.
    const suppressedAt = new Map<string, number>();
    const coordinator = orgStub(org.id);
    const suppress = async (numbers: string[]) => {
      await coordinator.suppress(
        numbers.map((number) => ({ number, reason: "simulation" })),
        "api",
      );
      for (const n of numbers) if (!suppressedAt.has(n)) suppressedAt.set(n, clock.now());
    };
    await suppress(pool.filter(() => r.chance(0.05)).map((c) => c.phone_number));

    const settings = {
      ...DEFAULT_SETTINGS,
      // At full length more calls at once: fewer, fuller clock steps (a third less time for the same 10,000+ calls).
      max_concurrency: SLOW ? 64 : 16,
      rate_limit: SLOW ? 64 : 16,
      retry_config: { enabled: true, max_retries: 2, retry_delay_seconds: 1800, retry_on_busy: true, retry_on_no_answer: true, retry_on_voicemail: true },
      circuit_breaker: { enabled: false, failure_threshold: 0.5, window_seconds: 60, min_calls_in_window: 10 },
      // Weekdays only, around the clock in UTC: the campaign's own schedule, combined with each recipient's hours.
      schedule_config: {
        enabled: true,
        timezone: "UTC",
        slots: [0, 1, 2, 3, 4].map((d) => ({ day_of_week: d, start_time: "00:00", end_time: "24:00" })),
      },
    } as CampaignSettings;
    const stubs: CampaignStub[] = [];
    for (let k = 0; k < 3; k++) {
      const id = uniqueId();
      const stub = campaignStub(id);
      await stub.initialize({ campaignId: id, orgId: org.id, name: `rules ${k}`, workflowId: 1, telephonyConfigurationId: 1, sourceId: "rules.csv", settings });
      const mine = pool.filter(() => r.chance(0.9));
      for (let i = 0; i < mine.length; i += 1000) await stub.importContacts(mine.slice(i, i + 1000));
      await stub.finishImport();
      await stub.start();
      stubs.push(stub);
    }

    const dialsOf = new Map<string, number[]>();
    let checked = 0;
    const check = async () => {
      for (; checked < carrier.started.length; checked++) {
        const s = carrier.started[checked];
        const n = s.req.phoneNumber;
        const tz = zoneOf.get(n)!;
        expect(within(s.at, tz), `${n} dialed at ${new Date(s.at).toISOString()}, ${localMinutes(s.at, tz)} min into the day in ${tz}`).toBe(true);
        const at = suppressedAt.get(n);
        expect(at === undefined || s.at < at, `${n} dialed after it was suppressed`).toBe(true);
        const times = [...(dialsOf.get(n) ?? []), s.at];
        dialsOf.set(n, times);
        const inWindow = times.filter((t) => t > s.at - CAP.window_hours * 3_600_000).length;
        expect(inWindow, `${n} dialed ${inWindow} times within ${CAP.window_hours} h`).toBeLessThanOrEqual(CAP.max_attempts);
        const d = new Date(s.at).getUTCDay();
        expect(d >= 1 && d <= 5, `dialed on a weekend (${new Date(s.at).toISOString()})`).toBe(true);
      }
      if (r.chance(0.01)) await suppress([r.pick(pool).phone_number]);
    };
    const OUTCOMES: CallStatus[] = ["completed", "no_answer", "no_answer", "busy", "voicemail"];
    await simulate(carrier, stubs, {
      untilMs: T0 + 60 * 86_400_000,
      // Whole minutes: calls end together, so the clock takes fewer, fuller steps (each runs every campaign's alarm).
      plan: (_s: Started) => ({ durationMs: r.int(1, 4) * 60_000, outcome: r.pick(OUTCOMES) }),
      check,
      stop: async () => (await Promise.all(stubs.map(async (s) => unwrap(await s.progress())))).every((p) => p.state === "completed"),
    });
    await check();

    const progress = await Promise.all(stubs.map(async (s) => unwrap(await s.progress())));
    for (const p of progress) expect(p.state).toBe("completed");
    expect(carrier.started.length).toBeGreaterThanOrEqual(TARGET_CALLS);
    // Every rule did something: contacts were held, suppressed and deferred by the cap.
    const skipped = progress.map((p) => p.calling_rules.skipped);
    expect(skipped.reduce((n, s) => n + (s.local_hours ?? 0), 0)).toBeGreaterThan(0);
    expect(skipped.reduce((n, s) => n + (s.suppressed ?? 0), 0)).toBeGreaterThan(0);
    expect(skipped.reduce((n, s) => n + (s.attempt_cap ?? 0), 0)).toBeGreaterThan(0);
    console.log(
      JSON.stringify({
        simulation: "calling_rules",
        calls: carrier.started.length,
        suppressed: suppressedAt.size,
        skipped,
        days: (clock.now() - T0) / 86_400_000,
      }),
    );
  });
});
