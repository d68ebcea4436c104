// The calling rules over HTTP: the suppression list (JSON and CSV, paged, per organization), a single call to a
// suppressed number refused, and in campaigns: suppressed contacts never called, the attempt cap across campaigns,
// and the recipient's local hours holding contacts until their zone opens. Each is counted and logged.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { clock } from "../../src/lib/clock";
import { defaultRules } from "../../src/telephony/calling-rules";
import { call, createOrg } from "../helpers";
import { setup, simRequests, type Setup } from "../calls/support";
import { CAMPAIGNS, createCampaign, upload } from "../campaigns/support";
import { unwrap } from "../../src/campaigns/errors";
import { eq } from "drizzle-orm";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import { withCampaignCallIds } from "../../src/calls/runs/campaign-call-ids";
import { deliverAll, play } from "../calls/support";

const LIST = "/api/v1/organizations/suppressions";
const POLICY = "/api/v1/organizations/calling-policy";
const NY = "+12125550101";
const NY2 = "+12125550102";
const LA = "+14155550177";

const world = (s: Setup) => ({ ...s.org, workflowId: s.agent.id, configId: s.configId });
const csv = (numbers: string[]) => ["phone_number,first_name", ...numbers.map((n, i) => `${n},Name${i}`)].join("\n");
const dialed = async (s: Setup) =>
  (await simRequests(s.acct)).filter((r) => /Calls\.json$/.test(r.path)).map((r) => decodeURIComponent(new URLSearchParams(r.body).get("To") ?? ""));
const stubOf = (id: number) => env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(id)));
const logs = async (s: Setup, id: number) =>
  (await call("GET", `${CAMPAIGNS}/${id}/logs?limit=100`, { key: s.org.key })).json.items as { event: string; details: Record<string, unknown> }[];

async function campaign(s: Setup, numbers: string[]): Promise<number> {
  const created = await createCampaign(world(s), { source_url: await upload(s.org, csv(numbers)), rate_limit: 50, retry_config: { enabled: false } });
  expect(created.status, created.text).toBe(200);
  const id = created.json.id as number;
  expect((await call("POST", `${CAMPAIGNS}/${id}/start`, { key: s.org.key })).status).toBe(200);
  return id;
}

async function drive(id: number, rounds = 6): Promise<void> {
  for (let i = 0; i < rounds; i++) await runDurableObjectAlarm(stubOf(id));
}

afterEach(() => clock.set(null));

describe("the defaults", () => {
  it("are on where the deployment sets nothing: 08:00–21:00 local, 3 attempts a number in 24 hours", () => {
    expect(defaultRules({})).toEqual({
      localHours: { enabled: true, start: "08:00", end: "21:00" },
      attemptCap: { enabled: true, max_attempts: 3, window_hours: 24 },
    });
    expect(defaultRules({ CALLING_RULES_DEFAULTS: "off" }).localHours.enabled).toBe(false);
  });

  it("rejects hours that are not HH:MM or that end before they start, located", async () => {
    const org = await createOrg();
    const res = await call("PUT", POLICY, { key: org.key, body: { local_hours: { start: "21:00", end: "08:00" }, attempt_cap: { max_attempts: 0 } } });
    expect(res.status).toBe(422);
    const locs = res.json.detail.map((d: { loc: (string | number)[] }) => d.loc.join("."));
    expect(locs).toEqual(expect.arrayContaining(["body.local_hours.end", "body.attempt_cap.max_attempts"]));
    expect((await call("PUT", POLICY, { key: org.key, body: { local_hours: { start: "8am" } } })).status).toBe(422);
  });
});

describe("the suppression list", () => {
  it("adds (JSON and CSV), pages, reads, removes; a bad number adds nothing; another organization sees none", async () => {
    const org = await createOrg();
    const bad = await call("POST", LIST, { key: org.key, body: { phone_numbers: [NY, "555-0100"], reason: "asked" } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail).toEqual([expect.objectContaining({ loc: ["body", "phone_numbers", 1], input: "555-0100" })]);
    expect((await call("GET", LIST, { key: org.key })).json).toEqual({ items: [], total: 0, next_cursor: null });

    const added = await call("POST", LIST, { key: org.key, body: { phone_numbers: [NY, NY, LA], reason: "asked" } });
    expect(added.json).toEqual({ added: 2, already_listed: 0, total: 2 });
    const fromCsv = await call("POST", `${LIST}/csv`, {
      key: org.key,
      headers: { "Content-Type": "text/csv" },
      raw: `phone_number,reason\n${NY2},complaint\n${LA},again\n`,
    });
    expect(fromCsv.status, fromCsv.text).toBe(200);
    expect(fromCsv.json).toEqual({ added: 1, already_listed: 1, total: 3 });
    const badCsv = await call("POST", `${LIST}/csv`, { key: org.key, headers: { "Content-Type": "text/csv" }, raw: "number\n+12125550199\n" });
    expect(badCsv.status).toBe(422);

    const first = await call("GET", `${LIST}?limit=2`, { key: org.key });
    expect(first.json.items.map((i: { phone_number: string }) => i.phone_number)).toEqual([NY, NY2]);
    const second = await call("GET", `${LIST}?limit=2&cursor=${first.json.next_cursor}`, { key: org.key });
    expect(second.json.items).toEqual([{ phone_number: LA, reason: "asked", source: "api", created_at: expect.any(String) }]);
    expect((await call("GET", `${LIST}/${encodeURIComponent(NY2)}`, { key: org.key })).json).toMatchObject({ reason: "complaint", source: "csv" });

    const other = await createOrg();
    expect((await call("GET", `${LIST}/${encodeURIComponent(NY)}`, { key: other.key })).status).toBe(404);
    expect((await call("DELETE", `${LIST}/${encodeURIComponent(NY)}`, { key: other.key })).status).toBe(404);
    expect((await call("DELETE", `${LIST}/${encodeURIComponent(NY)}`, { key: org.key })).status).toBe(204);
    expect((await call("GET", `${LIST}/${encodeURIComponent(NY)}`, { key: org.key })).status).toBe(404);
  });

  it("refuses a single call to a suppressed number with a located 422, and calls nobody", async () => {
    const s = await setup("twilio");
    expect((await call("POST", LIST, { key: s.org.key, body: { phone_numbers: [NY] } })).status).toBe(200);
    const res = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: s.org.key,
      body: { phone_number: NY, initial_context: { first_name: "Ada" } },
    });
    expect(res.status).toBe(422);
    expect(res.json.detail).toEqual([expect.objectContaining({ loc: ["body", "phone_number"], type: "number_suppressed" })]);
    expect(await dialed(s)).toEqual([]);
  });

  it("a campaign never calls a suppressed number: finished as suppressed, counted and logged", async () => {
    const s = await setup("twilio");
    expect((await call("POST", LIST, { key: s.org.key, body: { phone_numbers: [NY2] } })).status).toBe(200);
    const id = await campaign(s, [NY, NY2]);
    await drive(id);
    expect(await dialed(s)).toEqual([NY]);
    const progress = (await call("GET", `${CAMPAIGNS}/${id}/progress`, { key: s.org.key })).json;
    expect(progress).toMatchObject({ total: 2, processed: 2, pending: 0, calling_rules: { held_local_hours: 0, skipped: { suppressed: 1 } } });
    const skipped = (await logs(s, id)).filter((l) => l.event === "dial_skipped");
    expect(skipped.map((l) => l.details)).toEqual([expect.objectContaining({ phone_number: NY2, reason: "suppressed" })]);
  });
});

describe("the attempt cap across campaigns", () => {
  it("a number dialed up to the cap in one campaign waits in another until the window allows it", async () => {
    const s = await setup("twilio");
    expect((await call("PUT", POLICY, { key: s.org.key, body: { attempt_cap: { max_attempts: 1, window_hours: 24 } } })).status).toBe(200);
    const first = await campaign(s, [NY]);
    await drive(first);
    expect(await dialed(s)).toEqual([NY]);
    const second = await campaign(s, [NY, NY2]);
    await drive(second);
    expect(await dialed(s)).toEqual([NY, NY2]);
    const progress = (await call("GET", `${CAMPAIGNS}/${second}/progress`, { key: s.org.key })).json;
    expect(progress.calling_rules.skipped).toEqual({ attempt_cap: 1 });
    expect(progress).toMatchObject({ pending: 1, retry_waiting: 0 });
    const skip = (await logs(s, second)).find((l) => l.event === "dial_skipped");
    expect(skip?.details).toMatchObject({ phone_number: NY, reason: "attempt_cap", retry_at: expect.any(String) });
    // A day later the cap allows it.
    clock.set(Date.parse(String(skip!.details.retry_at)) + 1000);
    await drive(second);
    expect(await dialed(s)).toEqual([NY, NY2, NY]);
  });
});

describe("what counts towards the attempt cap", () => {
  it("single calls do not: a number called singly 4 times is dialed by a campaign at once, and the campaign completes", async () => {
    const s = await setup("twilio");
    expect((await call("PUT", POLICY, { key: s.org.key, body: { attempt_cap: { max_attempts: 3, window_hours: 24 } } })).status).toBe(200);
    for (let i = 0; i < 4; i++) {
      const single = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
        key: s.org.key,
        body: { phone_number: NY, initial_context: { first_name: "Ada" } },
      });
      expect(single.status, single.text).toBe(200);
    }
    const id = await campaign(s, [NY]);
    await drive(id);
    expect(await dialed(s)).toEqual([NY, NY, NY, NY, NY]);
    const [run] = await withCampaignCallIds(env, await getDb(env).select().from(workflowRuns).where(eq(workflowRuns.campaignId, id)).all());
    await deliverAll(await play(run.providerCallId!, "no_answer"));
    await drive(id, 2);
    const progress = (await call("GET", `${CAMPAIGNS}/${id}/progress`, { key: s.org.key })).json;
    expect(progress).toMatchObject({ state: "completed", total: 1, processed: 1, waiting_for: null });
    expect(progress.calling_rules).toEqual({ held_local_hours: 0, skipped: {}, attempt_cap_wait: { contacts: 0, next_at: null } });
  });

  it("a campaign whose only contacts left wait for the cap says so in progress, with when the cap frees them", async () => {
    const s = await setup("twilio");
    expect((await call("PUT", POLICY, { key: s.org.key, body: { attempt_cap: { max_attempts: 1, window_hours: 24 } } })).status).toBe(200);
    await drive(await campaign(s, [NY]));
    const second = await campaign(s, [NY]);
    await drive(second);
    expect(await dialed(s)).toEqual([NY]);
    const skip = (await logs(s, second)).find((l) => l.event === "dial_skipped");
    const progress = (await call("GET", `${CAMPAIGNS}/${second}/progress`, { key: s.org.key })).json;
    expect(progress).toMatchObject({ state: "running", total: 1, processed: 0, waiting_for: "attempt_cap" });
    expect(progress.calling_rules.attempt_cap_wait).toEqual({ contacts: 1, next_at: skip?.details.retry_at });
    clock.set(Date.parse(String(skip!.details.retry_at)) + 1000);
    await drive(second);
    expect(await dialed(s)).toEqual([NY, NY]);
    const after = (await call("GET", `${CAMPAIGNS}/${second}/progress`, { key: s.org.key })).json;
    expect(after).toMatchObject({ waiting_for: null, calling_rules: { attempt_cap_wait: { contacts: 0, next_at: null } } });
  });
});

describe("the recipient's local hours", () => {
  it("holds contacts whose local time is outside the hours, and calls them when their zone opens", async () => {
    const s = await setup("twilio");
    const put = await call("PUT", POLICY, { key: s.org.key, body: { local_hours: { start: "08:00", end: "21:00" } } });
    expect(put.status, put.text).toBe(200);
    expect(put.json.effective.local_hours).toEqual({ enabled: true, start: "08:00", end: "21:00" });
    // 14:00 UTC in January: 09:00 in New York, 06:00 in Los Angeles.
    clock.set(Date.parse("2031-01-07T14:00:00Z"));
    const id = await campaign(s, [LA, NY]);
    await drive(id);
    expect(await dialed(s)).toEqual([NY]);
    const progress = (await call("GET", `${CAMPAIGNS}/${id}/progress`, { key: s.org.key })).json;
    expect(progress.calling_rules).toEqual({ held_local_hours: 1, skipped: { local_hours: 1 }, attempt_cap_wait: { contacts: 0, next_at: null } });
    expect(progress.state).toBe("running");
    const wait = (await logs(s, id)).find((l) => l.event === "local_hours_wait");
    expect(wait?.details).toMatchObject({ zone: "America/Los_Angeles", contacts: 1, opens_at: "2031-01-07T16:00:00.000Z" });
    // The object wakes itself when Los Angeles reaches 08:00.
    const alarm = unwrap(await stubOf(id).progress());
    expect(alarm.calling_rules.held_local_hours).toBe(1);
    clock.set(Date.parse("2031-01-07T16:00:00Z"));
    await drive(id);
    expect(await dialed(s)).toEqual([NY, LA]);
    expect(unwrap(await stubOf(id).progress()).calling_rules.held_local_hours).toBe(0);
  });
});

describe("a contact's own time zone", () => {
  it("overrides the number's: a New York number whose contact lives in Los Angeles waits for Los Angeles' hours", async () => {
    const s = await setup("twilio");
    expect((await call("PUT", POLICY, { key: s.org.key, body: { local_hours: { start: "08:00", end: "21:00" } } })).status).toBe(200);
    // 14:00 UTC in January: 09:00 in New York, 06:00 in Los Angeles. The header's case does not matter.
    clock.set(Date.parse("2031-01-07T14:00:00Z"));
    const file = ["phone_number,first_name,TimeZone", `${NY},Ada,America/Los_Angeles`, `${NY2},Bo,`].join("\n");
    const created = await createCampaign(world(s), { source_url: await upload(s.org, file), rate_limit: 50, retry_config: { enabled: false } });
    expect(created.status, created.text).toBe(200);
    const id = created.json.id as number;
    expect((await call("POST", `${CAMPAIGNS}/${id}/start`, { key: s.org.key })).status).toBe(200);
    await drive(id);
    expect(await dialed(s)).toEqual([NY2]);
    expect((await call("GET", `${CAMPAIGNS}/${id}/progress`, { key: s.org.key })).json.calling_rules.held_local_hours).toBe(1);
    clock.set(Date.parse("2031-01-07T16:00:00Z"));
    await drive(id);
    expect(await dialed(s)).toEqual([NY2, NY]);
  });

  it("a time zone the runtime does not know is a located 422 at create, and nothing is created", async () => {
    const s = await setup("twilio");
    const file = ["phone_number,timezone", `${NY},America/New_York`, `${NY2},Mars/Olympus`, `${LA},EST5EDT`].join("\n");
    const res = await createCampaign(world(s), { source_url: await upload(s.org, file) });
    expect(res.status).toBe(422);
    expect(res.json.detail).toEqual([expect.objectContaining({ loc: ["body", "source_url", 3, "timezone"], type: "timezone_invalid", input: "Mars/Olympus" })]);
    expect((await call("GET", CAMPAIGNS, { key: s.org.key })).json.items).toEqual([]);
  });
});
