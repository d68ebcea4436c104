// The destination policy over HTTP: the four numbers the issue found dialed are refused for a
// single call, in a campaign CSV and at dial time, until the organization's override allows them; another
// organization is never affected; GET/PUT /organizations/calling-policy.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, createOrg } from "../helpers";
import { CALLEE, setup, simRequests, type Setup } from "../calls/support";
import { CAMPAIGNS, createCampaign, upload } from "../campaigns/support";
import { unwrap } from "../../src/campaigns/errors";

const POLICY = "/api/v1/organizations/calling-policy";
const ISSUE_NUMBERS = ["+19005550100", "+449098790000", "+870773123456", "+252612345678"];
const DEFAULT_BLOCKED = ["premium_rate", "shared_cost", "personal_number", "uan", "pager", "satellite", "global_service"];
const OVERRIDE = { allowed_countries: ["US", "GB", "SO"], blocked_number_types: [] };

const dial = (s: Setup, phone_number: string) =>
  call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, { key: s.org.key, body: { phone_number, initial_context: { first_name: "Ada" } } });
const putPolicy = (s: { org: { key: string } }, body: unknown) => call("PUT", POLICY, { key: s.org.key, body });
const originates = async (s: Setup) => (await simRequests(s.acct)).filter((r) => /Calls\.json$/.test(r.path));
const world = (s: Setup) => ({ ...s.org, workflowId: s.agent.id, configId: s.configId });
const csv = (numbers: string[]) => ["phone_number,first_name", ...numbers.map((n, i) => `${n},Name${i}`)].join("\n");

describe("single calls", () => {
  it("refuses each of the issue's numbers with a located 422 that says why, and asks no carrier", async () => {
    const s = await setup("twilio");
    const reasons: Record<string, string> = {};
    for (const n of ISSUE_NUMBERS) {
      const res = await dial(s, n);
      expect(res.status, n).toBe(422);
      expect(res.json.detail).toEqual([
        {
          loc: ["body", "phone_number"],
          msg: expect.stringContaining("calling policy"),
          type: "destination_not_allowed",
          input: n,
          ctx: expect.objectContaining({ reason: expect.any(String) }),
        },
      ]);
      reasons[n] = `${res.json.detail[0].ctx.reason}:${res.json.detail[0].ctx.number_type}`;
    }
    expect(reasons).toEqual({
      "+19005550100": "number_type_blocked:premium_rate",
      "+449098790000": "number_type_blocked:premium_rate",
      "+870773123456": "number_type_blocked:satellite",
      "+252612345678": "country_not_allowed:mobile",
    });
    expect(await originates(s)).toEqual([]);
    // An ordinary number in the caller ID's country still goes through.
    expect((await dial(s, CALLEE)).status).toBe(200);
  });

  it("dials them after the organization's override; another organization is unaffected", async () => {
    const s = await setup("twilio");
    const other = await setup("twilio");
    expect((await putPolicy(s, OVERRIDE)).status).toBe(200);
    for (const n of ISSUE_NUMBERS) {
      const res = await dial(s, n);
      expect(res.status, `${n}: ${res.text}`).toBe(200);
      expect(res.json.status).toBe("initiated");
    }
    expect(await originates(s)).toHaveLength(4);
    for (const n of ISSUE_NUMBERS) expect((await dial(other, n)).status, n).toBe(422);
    expect(await originates(other)).toEqual([]);
  });

  it("an allowed number passes alone; resetting to the defaults refuses again", async () => {
    const s = await setup("twilio");
    expect((await putPolicy(s, { allowed_numbers: ["+449098790000"] })).status).toBe(200);
    expect((await dial(s, "+449098790000")).status).toBe(200);
    expect((await dial(s, "+19005550100")).status).toBe(422);
    expect((await putPolicy(s, { allowed_numbers: null })).status).toBe(200);
    expect((await dial(s, "+449098790000")).status).toBe(422);
  });
});

describe("campaign CSVs", () => {
  it("refuses the issue's numbers at create with one located item per row, and creates nothing", async () => {
    const s = await setup("twilio");
    const key = await upload(s.org, csv([CALLEE, ...ISSUE_NUMBERS]));
    const res = await createCampaign(world(s), { source_url: key });
    expect(res.status, res.text).toBe(422);
    expect(res.json.detail.map((d: { loc: unknown[]; type: string; input: string }) => [d.loc, d.type, d.input])).toEqual(
      ISSUE_NUMBERS.map((n, i) => [["body", "source_url", i + 3, "phone_number"], "destination_not_allowed", n]),
    );
    expect(res.json.detail[0].msg).toMatch(/premium-rate number/);
    expect(res.json.detail[3].msg).toMatch(/^Calls to Somalia \(SO\) are not allowed/);
    expect((await call("GET", `${CAMPAIGNS}/`, { key: s.org.key })).json.items).toEqual([]);
  });

  it("accepts them after the override, and still refuses them for another organization", async () => {
    const s = await setup("twilio");
    const other = await setup("twilio");
    expect((await putPolicy(s, OVERRIDE)).status).toBe(200);
    const res = await createCampaign(world(s), { source_url: await upload(s.org, csv([CALLEE, ...ISSUE_NUMBERS])) });
    expect(res.status, res.text).toBe(200);
    expect(res.json.total_rows).toBe(5);
    const refused = await createCampaign(world(other), { source_url: await upload(other.org, csv(ISSUE_NUMBERS)) });
    expect(refused.status).toBe(422);
    expect(refused.json.detail).toHaveLength(4);
  });

  it("checks again before each dial: contacts the policy refuses since create fail with the reason, uncalled", async () => {
    const s = await setup("twilio");
    expect((await putPolicy(s, OVERRIDE)).status).toBe(200);
    const created = await createCampaign(world(s), {
      source_url: await upload(s.org, csv([CALLEE, ...ISSUE_NUMBERS])),
      rate_limit: 50,
      retry_config: { enabled: false },
    });
    expect(created.status, created.text).toBe(200);
    const id = created.json.id as number;
    expect((await putPolicy(s, { allowed_countries: null, blocked_number_types: null })).status).toBe(200);

    expect((await call("POST", `${CAMPAIGNS}/${id}/start`, { key: s.org.key })).status).toBe(200);
    const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(id)));
    for (let i = 0; i < 10 && unwrap(await stub.progress()).pending > 0; i++) await runDurableObjectAlarm(stub);

    expect(unwrap(await stub.progress())).toMatchObject({ total: 5, processed: 5, pending: 0, failed: 4 });
    expect((await originates(s)).map((r) => r.body)).toEqual([expect.stringContaining(encodeURIComponent(CALLEE))]);
    const logs = (await call("GET", `${CAMPAIGNS}/${id}/logs?limit=100`, { key: s.org.key })).json.items as {
      event: string;
      details: Record<string, unknown>;
    }[];
    const refused = logs.filter((l) => l.event === "dial_failed");
    expect(refused.map((l) => l.details.phone_number).sort()).toEqual([...ISSUE_NUMBERS].sort());
    for (const l of refused) expect(l.details).toMatchObject({ kind: "destination_refused", error: expect.stringContaining("calling policy") });
  });
});

describe("GET and PUT /organizations/calling-policy", () => {
  it("shows the defaults: the caller IDs' countries and the high-cost types", async () => {
    const s = await setup("twilio");
    const res = await call("GET", POLICY, { key: s.org.key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      allowed_countries: null,
      blocked_number_types: null,
      allowed_numbers: [],
      allow_private_pbx: false,
      record_calls: true,
      local_hours: null,
      attempt_cap: null,
      effective: {
        allowed_countries: ["US"],
        allowed_countries_source: "caller_ids",
        blocked_number_types: expect.arrayContaining(DEFAULT_BLOCKED),
        // The test suites run with the deployment's calling-rule defaults off (CALLING_RULES_DEFAULTS); a deployment
        // that sets nothing has them on (test/telephony/calling-rules.test.ts).
        local_hours: { enabled: false, start: "08:00", end: "21:00" },
        attempt_cap: { enabled: false, max_attempts: 3, window_hours: 24 },
      },
      updated_at: null,
    });
    expect(res.json.effective.blocked_number_types).toHaveLength(DEFAULT_BLOCKED.length);
    // An organization without E.164 caller IDs allows no country until it says which.
    const bare = await createOrg();
    expect((await call("GET", POLICY, { key: bare.key })).json.effective).toMatchObject({ allowed_countries: [], allowed_countries_source: "caller_ids" });
  });

  it("merges a partial update, normalizes it, and null restores a default", async () => {
    const s = await setup("twilio");
    const first = await putPolicy(s, { allowed_countries: ["gb", "US", "GB"] });
    expect(first.status, first.text).toBe(200);
    expect(first.json).toMatchObject({
      allowed_countries: ["GB", "US"],
      blocked_number_types: null,
      effective: { allowed_countries: ["GB", "US"], allowed_countries_source: "policy" },
      updated_at: expect.any(String),
    });
    const second = await putPolicy(s, { blocked_number_types: ["satellite", "premium_rate"], allowed_numbers: ["+252612345678"] });
    expect(second.json).toMatchObject({
      allowed_countries: ["GB", "US"],
      blocked_number_types: ["premium_rate", "satellite"],
      allowed_numbers: ["+252612345678"],
    });
    expect((await call("GET", POLICY, { key: s.org.key })).json).toEqual(second.json);
    const reset = await putPolicy(s, { allowed_countries: null });
    expect(reset.json).toMatchObject({
      allowed_countries: null,
      effective: { allowed_countries: ["US"], allowed_countries_source: "caller_ids" },
      blocked_number_types: ["premium_rate", "satellite"],
    });
  });

  it("each change is in the audit log with the key that made it", async () => {
    const s = await setup("twilio");
    await putPolicy(s, { allowed_countries: ["so", "US"], allowed_numbers: ["+449098790000"] });
    await putPolicy(s, { blocked_number_types: null });
    const log = (await call("GET", "/api/v1/organizations/audit-log", { key: s.org.key })).json.items.filter(
      (e: { resource_type: string }) => e.resource_type === "calling_policy",
    );
    expect(log).toEqual([
      expect.objectContaining({
        action: "update",
        resource_id: s.org.id,
        api_key_id: expect.any(Number),
        api_key_name: "test",
        summary: { fields: ["blocked_number_types"], blocked_number_types: null },
      }),
      expect.objectContaining({
        action: "update",
        resource_id: s.org.id,
        summary: { fields: ["allowed_countries", "allowed_numbers"], allowed_countries: ["SO", "US"], allowed_numbers_count: 1 },
      }),
    ]);
  });

  it("refuses bad input with located 422s and changes nothing", async () => {
    const s = await setup("twilio");
    const bad = async (body: unknown) => {
      const res = await putPolicy(s, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      return res.json.detail as { loc: unknown[]; type: string }[];
    };
    expect(await bad({ allowed_countries: ["US", "XX"] })).toMatchObject([{ loc: ["body", "allowed_countries", 1], type: "country_invalid" }]);
    expect(await bad({ blocked_number_types: ["premium"] })).toMatchObject([{ loc: ["body", "blocked_number_types", 0], type: "enum" }]);
    expect(await bad({ allowed_numbers: ["+1415555", "12345"] })).toMatchObject([
      { loc: ["body", "allowed_numbers", 0], type: "value_error" },
      { loc: ["body", "allowed_numbers", 1], type: "value_error" },
    ]);
    expect(await bad({ allowed_countries: "US" })).toMatchObject([{ loc: ["body", "allowed_countries"], type: "list_type" }]);
    expect(await bad({ allowed_countries: ["US"], blocked: [] })).toEqual([expect.objectContaining({ loc: ["body", "blocked"], type: "extra_forbidden" })]);
    expect((await call("GET", POLICY, { key: s.org.key })).json.updated_at).toBeNull();
    expect((await call("GET", POLICY)).status).toBe(401);
  });
});
