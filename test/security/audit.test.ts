// The audit trail: keys carry last_used_at; every configuration, number, agent, campaign and key change records the
// key that made it; GET /organizations/audit-log lists them newest first, paginated, for the organization only.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { startCampaignCall } from "../../src/calls/start/start";
import { clock } from "../../src/lib/clock";
import { call, createOrg, type Org } from "../helpers";
import { CALLEE, CONTEXT, runApi, setup, startCall } from "../calls/support";
import { type FakeCarrier, resetWorld, tick } from "../campaigns/engine-harness";
import { createCampaign, draftCampaign, goodCsv, setupOrg, upload, world } from "../campaigns/support";
import { unwrap } from "../../src/campaigns/errors";

afterEach(() => clock.set(null));

type Entry = {
  id: number;
  action: string;
  resource_type: string;
  resource_id: number | null;
  api_key_id: number | null;
  api_key_name: string | null;
  summary: Record<string, unknown>;
};

async function auditLog(org: Org, query = ""): Promise<Entry[]> {
  const res = await call("GET", `/api/v1/organizations/audit-log${query}`, { key: org.key });
  expect(res.status, res.text).toBe(200);
  return res.json.items;
}

async function newKey(org: Org, name: string): Promise<{ id: number; key: string }> {
  const res = await call("POST", "/api/v1/organizations/api-keys", { key: org.key, body: { name } });
  expect(res.status, res.text).toBe(200);
  return res.json;
}

/** The id of the key an organization from createOrg() was made with. */
async function firstKeyId(org: Org): Promise<number> {
  const res = await call("GET", "/api/v1/organizations/api-keys", { key: org.key });
  return res.json.items.find((k: { name: string }) => k.name === "test").id;
}

describe("API keys", () => {
  it("create and revoke are recorded with the acting key; a revoke of an unknown key records nothing", async () => {
    const org = await createOrg();
    const me = await firstKeyId(org);
    const made = await newKey(org, "ci");
    expect((await call("DELETE", `/api/v1/organizations/api-keys/${made.id}`, { key: org.key })).status).toBe(200);
    expect((await call("DELETE", `/api/v1/organizations/api-keys/${made.id}`, { key: org.key })).status).toBe(404);
    expect((await call("DELETE", "/api/v1/organizations/api-keys/999999", { key: org.key })).status).toBe(404);
    const log = await auditLog(org);
    expect(log).toEqual([
      expect.objectContaining({
        action: "revoke",
        resource_type: "api_key",
        resource_id: made.id,
        api_key_id: me,
        api_key_name: "test",
        summary: { name: "ci", key_last4: made.key.slice(-4) },
      }),
      expect.objectContaining({
        action: "create",
        resource_type: "api_key",
        resource_id: made.id,
        api_key_id: me,
        summary: { name: "ci", key_last4: made.key.slice(-4) },
      }),
    ]);
    expect(JSON.stringify(log)).not.toContain(made.key);
  });

  it("last_used_at: shown in the list, set on use, written at most once a minute", async () => {
    const org = await createOrg();
    const t0 = Date.now();
    clock.set(t0);
    const other = await newKey(org, "other");
    const keys = async () =>
      (await call("GET", "/api/v1/organizations/api-keys", { key: org.key })).json.items as { id: number; last_used_at: string | null }[];
    const first = await keys();
    const mine = first.find((k) => k.id !== other.id)!;
    expect(first.find((k) => k.id === other.id)!.last_used_at).toBeNull();
    const at0 = (await keys()).find((k) => k.id === mine.id)!.last_used_at;
    expect(at0).toBe(new Date(t0).toISOString());

    clock.set(t0 + 30_000);
    expect((await keys()).find((k) => k.id === mine.id)!.last_used_at).toBe(at0); // not rewritten within the minute
    clock.set(t0 + 61_000);
    await keys();
    expect((await keys()).find((k) => k.id === mine.id)!.last_used_at).toBe(new Date(t0 + 61_000).toISOString());

    await call("GET", "/api/v1/workflow/fetch", { key: other.key });
    expect((await keys()).find((k) => k.id === other.id)!.last_used_at).toBe(new Date(t0 + 61_000).toISOString());
  });
});

describe("configurations and numbers", () => {
  it("create, update, delete of a configuration and its numbers are recorded; a rotated secret is named, never shown; refused changes record nothing", async () => {
    const org = await createOrg();
    const me = await firstKeyId(org);
    const base = "/api/v1/organizations/telephony-configs";
    const created = await call("POST", base, {
      key: org.key,
      body: { name: "main", config: { provider: "twilio", account_sid: "AC00000000000000000000000000000001", auth_token: "first-secret-1234" } },
    });
    expect(created.status, created.text).toBe(200);
    const id = created.json.id;
    // A clashing name is a 409 and no entry.
    expect(
      (
        await call("POST", base, {
          key: org.key,
          body: { name: "main", config: { provider: "twilio", account_sid: "AC00000000000000000000000000000002", auth_token: "x-secret-9999" } },
        })
      ).status,
    ).toBe(409);
    expect((await call("PUT", `${base}/${id}`, { key: org.key, body: { name: "renamed", config: { auth_token: "second-secret-5678" } } })).status).toBe(200);
    expect((await call("PUT", `${base}/999999`, { key: org.key, body: { name: "nope" } })).status).toBe(404);

    const num = await call("POST", `${base}/${id}/phone-numbers`, { key: org.key, body: { address: "+14155550100", is_default_caller_id: true } });
    expect(num.status, num.text).toBe(200);
    expect((await call("PUT", `${base}/${id}/phone-numbers/${num.json.id}`, { key: org.key, body: { label: "front desk" } })).status).toBe(200);
    expect((await call("DELETE", `${base}/${id}/phone-numbers/${num.json.id}`, { key: org.key })).status).toBe(200);
    expect((await call("DELETE", `${base}/${id}/phone-numbers/${num.json.id}`, { key: org.key })).status).toBe(404);
    expect((await call("DELETE", `${base}/${id}`, { key: org.key })).status).toBe(200);
    expect((await call("DELETE", `${base}/${id}`, { key: org.key })).status).toBe(404);

    const log = await auditLog(org);
    expect(log.map((e) => [e.action, e.resource_type, e.resource_id, e.api_key_id])).toEqual([
      ["delete", "telephony_config", id, me],
      ["delete", "phone_number", num.json.id, me],
      ["update", "phone_number", num.json.id, me],
      ["create", "phone_number", num.json.id, me],
      ["update", "telephony_config", id, me],
      ["create", "telephony_config", id, me],
    ]);
    expect(log[0].summary).toEqual({ name: "renamed", provider: "twilio" });
    expect(log[1].summary).toEqual({ config_id: id, address: "+14155550100" });
    expect(log[2].summary).toEqual({ config_id: id, label: "front desk" });
    expect(log[4].summary).toEqual({ name: "renamed", config_fields: ["auth_token"] });
    expect(log[5].summary).toEqual({ name: "main", provider: "twilio", is_default_outbound: false });
    const text = JSON.stringify(log);
    for (const secret of ["first-secret-1234", "second-secret-5678", "x-secret-9999"]) expect(text).not.toContain(secret);
  });
});

describe("agents", () => {
  it("create, update and status changes are recorded with the key that made them", async () => {
    const org = await createOrg();
    const other = await newKey(org, "deployer");
    const def = (prompt: string) => ({
      nodes: [
        { id: "s", type: "startCall", data: { prompt } },
        { id: "e", type: "endCall", data: { prompt: "bye" } },
      ],
      edges: [{ id: "s-e", source: "s", target: "e", data: { label: "bye", condition: "always" } }],
    });
    const wf = await call("POST", "/api/v1/workflow/create", { key: org.key, body: { name: "Agent", workflow_definition: def("hi") } });
    expect(wf.status, wf.text).toBe(200);
    const id = wf.json.id;
    expect((await call("PUT", `/api/v1/workflow/${id}`, { key: other.key, body: { workflow_definition: def("hello") } })).status).toBe(200);
    expect((await call("PUT", `/api/v1/workflow/${id}`, { key: other.key, body: { name: "Renamed" } })).status).toBe(200);
    expect((await call("PUT", `/api/v1/workflow/${id}/status`, { key: org.key, body: { status: "archived" } })).status).toBe(200);
    expect((await call("PUT", "/api/v1/workflow/999999/status", { key: org.key, body: { status: "archived" } })).status).toBe(404);

    const log = (await auditLog(org)).filter((e) => e.resource_type === "workflow");
    expect(log.map((e) => [e.action, e.resource_id, e.api_key_id, e.summary])).toEqual([
      ["set_status", id, expect.any(Number), { status: "archived" }],
      ["update", id, other.id, { fields: ["name"], name: "Renamed" }],
      ["update", id, other.id, { fields: ["workflow_definition"], version_number: 2 }],
      ["create", id, expect.any(Number), { name: "Agent", workflow_uuid: wf.json.workflow_uuid }],
    ]);
    expect(log[0].api_key_id).not.toBe(other.id);
  });
});

describe("campaigns", () => {
  it("create and PATCH record the key; the campaign carries created_by_key_id", async () => {
    const w = await world();
    const me = await firstKeyId(w);
    const other = await newKey(w, "scheduler");
    const res = await call("POST", "/api/v1/campaign/create", {
      key: other.key,
      body: { name: "Spring", workflow_id: w.workflowId, source_url: await upload(w, goodCsv(2)) },
    });
    expect(res.status, res.text).toBe(200);
    const id = res.json.id;
    expect(res.json.created_by_key_id).toBe(other.id);
    // A refused create (a missing file) records nothing.
    expect((await createCampaign(w, { source_url: `campaigns/${w.id}/nope.csv` })).status).toBe(422);
    expect((await call("PATCH", `/api/v1/campaign/${id}`, { key: w.key, body: { rate_limit: 5, retry_config: { max_retries: 1 } } })).status).toBe(200);
    expect((await call("GET", `/api/v1/campaign/${id}`, { key: w.key })).json.created_by_key_id).toBe(other.id);

    const log = (await auditLog(w)).filter((e) => e.resource_type === "campaign");
    expect(log.map((e) => [e.action, e.resource_id, e.api_key_id])).toEqual([
      ["update", id, me],
      ["create", id, other.id],
    ]);
    expect(log[0].summary).toEqual({ fields: ["retry_config", "rate_limit"], rate_limit: 5 });
    expect(log[1].summary).toMatchObject({ name: "Spring", workflow_id: w.workflowId, telephony_configuration_id: w.configId, total_rows: 2 });
  });

  describe("transitions and redial (fake carrier)", () => {
    let carrier: FakeCarrier;
    it("start, pause, resume, cancel and redial are recorded; a refused transition is not", async () => {
      carrier = resetWorld();
      const o = await setupOrg();
      const me = await firstKeyId(o.org);
      const { id, stub } = await draftCampaign(o, 2);
      await stub.updateSettings({ retry_config: { enabled: false } });
      const post = (verb: string, body?: unknown) => call("POST", `/api/v1/campaign/${id}/${verb}`, { key: o.org.key, body });
      expect((await post("pause")).status).toBe(409);
      expect((await post("start")).status).toBe(200);
      expect((await post("pause")).status).toBe(200);
      expect((await post("resume")).status).toBe(200);
      await tick(stub);
      for (const s of carrier.open(id)) await carrier.report(s, "busy");
      expect(unwrap(await stub.snapshot()).state).toBe("completed");
      const child = await post("redial", { outcomes: ["busy"] });
      expect(child.status, child.text).toBe(200);
      expect(child.json.created_by_key_id).toBe(me);
      expect((await call("POST", `/api/v1/campaign/${child.json.id}/cancel`, { key: o.org.key })).status).toBe(200);

      const log = (await auditLog(o.org)).filter((e) => e.resource_type === "campaign");
      expect(log.map((e) => [e.action, e.resource_id, e.api_key_id])).toEqual([
        ["cancel", child.json.id, me],
        ["redial", id, me],
        ["resume", id, me],
        ["pause", id, me],
        ["start", id, me],
      ]);
      expect(log[1].summary).toEqual({ redialed_campaign_id: child.json.id, outcomes: ["busy"], total_rows: 2 });
    });
  });
});

describe("runs", () => {
  it("a single call records the key that started it; a campaign's call, the key that created the campaign", async () => {
    const s = await setup("twilio");
    const other = await newKey(s.org, "dialer");
    const mine = await runApi(s, await startCall(s));
    expect(mine.created_by_key_id).toBe(await firstKeyId(s.org));
    const theirs = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: other.key,
      body: { phone_number: CALLEE, initial_context: CONTEXT },
    });
    expect(theirs.status, theirs.text).toBe(200);
    expect((await runApi(s, theirs.json.workflow_run_id)).created_by_key_id).toBe(other.id);

    const campaign = await env.DB.prepare(
      "INSERT INTO campaigns (org_id, name, workflow_id, telephony_configuration_id, state, source_id, settings, created_by_key_id) VALUES (?, 'c', ?, ?, 'running', 'campaigns/x.csv', '{}', ?) RETURNING id",
    )
      .bind(s.org.id, s.agent.id, s.configId, other.id)
      .first<{ id: number }>();
    const r = await startCampaignCall(env, {
      orgId: s.org.id,
      campaignId: campaign!.id,
      contactId: 1,
      attempt: 1,
      workflowId: s.agent.id,
      telephonyConfigurationId: s.configId,
      phoneNumber: CALLEE,
      initialContext: {},
      greetingOverride: null,
    });
    expect(r.ok).toBe(true);
    expect((await runApi(s, r.runId!)).created_by_key_id).toBe(other.id);
  });
});

describe("GET /organizations/audit-log", () => {
  it("newest first, paginated with {items, next_cursor}, limit 1–100; another organization's entries are never visible", async () => {
    const org = await createOrg();
    const stranger = await createOrg();
    await newKey(stranger, "theirs");
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await newKey(org, `k${i}`)).id);

    const page1 = await call("GET", "/api/v1/organizations/audit-log?limit=2", { key: org.key });
    expect(page1.status).toBe(200);
    expect(page1.json.items.map((e: Entry) => e.resource_id)).toEqual([made[4], made[3]]);
    const page2 = await call("GET", `/api/v1/organizations/audit-log?limit=2&cursor=${page1.json.next_cursor}`, { key: org.key });
    expect(page2.json.items.map((e: Entry) => e.resource_id)).toEqual([made[2], made[1]]);
    const page3 = await call("GET", `/api/v1/organizations/audit-log?limit=2&cursor=${page2.json.next_cursor}`, { key: org.key });
    expect(page3.json).toEqual({ items: [expect.objectContaining({ resource_id: made[0] })], next_cursor: null });

    const all = await auditLog(org);
    expect(all).toHaveLength(5);
    expect(all[0]).toEqual({
      id: expect.any(Number),
      created_at: expect.stringMatching(/Z$/),
      action: "create",
      resource_type: "api_key",
      resource_id: made[4],
      api_key_id: expect.any(Number),
      api_key_name: "test",
      api_key_last4: org.key.slice(-4),
      summary: { name: "k4", key_last4: expect.any(String) },
    });
    // The stranger sees only its own entry, even with a cursor from this organization's listing.
    expect((await auditLog(stranger)).map((e) => e.summary.name)).toEqual(["theirs"]);
    const crossed = await call("GET", `/api/v1/organizations/audit-log?cursor=${page1.json.next_cursor}`, { key: stranger.key });
    expect(crossed.json.items.map((e: Entry) => e.summary.name)).toEqual(["theirs"]);

    for (const q of ["limit=0", "limit=101", "cursor=bogus"])
      expect((await call("GET", `/api/v1/organizations/audit-log?${q}`, { key: org.key })).status).toBe(422);
    expect((await call("GET", "/api/v1/organizations/audit-log")).status).toBe(401);
  });
});
