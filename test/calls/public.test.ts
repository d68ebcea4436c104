// POST /public/agent/{uuid} and /public/agent/workflow/{workflow_uuid}: every status,
// configuration routing, the organization's concurrency cap (429), Idempotency-Key, and the runs API.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { organizationStub } from "../../src/organizations/organization-object";
import { call, createOrg } from "../helpers";
import { CALLEE, configFor, createAgent, deliverAll, play, runRow, setup, simAccount, simFault, simRequests, startCall, type Setup, CONTEXT } from "./support";

const agentPath = (s: Setup, id = s.agent.workflow_uuid) => `/api/v1/public/agent/${id}`;
const workflowPath = (s: Setup, id = s.agent.workflow_uuid) => `/api/v1/public/agent/workflow/${id}`;
const post = (s: Setup, path: string, body: unknown, headers: Record<string, string> = {}) => call("POST", path, { key: s.org.key, body, headers });
const originates = async (s: Setup) => (await simRequests(s.acct)).filter((r) => r.method === "POST" && /Calls\.json$/.test(r.path)).length;

describe("POST /public/agent/{uuid} and /public/agent/workflow/{workflow_uuid}", () => {
  it("200 on both; the first also takes an API Trigger path, the second does not (404)", async () => {
    const s = await setup("twilio");
    for (const path of [agentPath(s), workflowPath(s)]) {
      const res = await post(s, path, { phone_number: CALLEE, initial_context: { first_name: "Ada", n: 2 } });
      expect(res.status, res.text).toBe(200);
      expect(res.json).toEqual({ status: "initiated", workflow_run_id: expect.any(Number), workflow_run_name: `WR-${res.json.workflow_run_id}` });
      expect((await runRow(res.json.workflow_run_id)).initialContext).toEqual({ first_name: "Ada", n: 2 });
    }
    const trigger = s.agent.workflow_definition.nodes.find((n) => n.type === "apiTrigger")!.data.trigger_path as string;
    const byPath = await post(s, agentPath(s, trigger), { phone_number: CALLEE, initial_context: CONTEXT });
    expect(byPath.status, byPath.text).toBe(200);
    expect((await runRow(byPath.json.workflow_run_id)).workflowId).toBe(s.agent.id);
    const refused = await post(s, workflowPath(s, trigger), { phone_number: CALLEE, initial_context: CONTEXT });
    expect(refused.status).toBe(404);
    expect(refused.json).toEqual({ detail: "Workflow not found" });
  });

  it("401 without a key or with a bad one; nothing is dialled", async () => {
    const s = await setup("twilio");
    const none = await call("POST", agentPath(s), { body: { phone_number: CALLEE, initial_context: CONTEXT } });
    expect(none.status).toBe(401);
    expect(none.json).toEqual({ detail: "Not authenticated" });
    const bad = await call("POST", workflowPath(s), { key: "edk_not-a-key", body: { phone_number: CALLEE, initial_context: CONTEXT } });
    expect(bad.status).toBe(401);
    expect(bad.json).toEqual({ detail: "Invalid API key" });
    expect(await originates(s)).toBe(0);
  });

  it("404 for an unknown agent or another organization's", async () => {
    const s = await setup("twilio");
    const other = await createOrg();
    for (const res of [
      await post(s, agentPath(s, crypto.randomUUID()), { phone_number: CALLEE, initial_context: CONTEXT }),
      await post(s, workflowPath(s, "not-a-uuid"), { phone_number: CALLEE, initial_context: CONTEXT }),
      await call("POST", agentPath(s), { key: other.key, body: { phone_number: CALLEE, initial_context: CONTEXT } }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ detail: "Workflow not found" });
    }
  });

  it("409 for an archived agent, for no configuration, and for a configuration that is not ready", async () => {
    const s = await setup("twilio");
    expect((await call("PUT", `/api/v1/workflow/${s.agent.id}/status`, { key: s.org.key, body: { status: "archived" } })).status).toBe(200);
    const archived = await post(s, agentPath(s), { phone_number: CALLEE, initial_context: CONTEXT });
    expect(archived.status).toBe(409);
    expect(archived.json).toEqual({ detail: "Workflow is archived" });
    // Restored, the agent takes calls again.
    expect((await call("PUT", `/api/v1/workflow/${s.agent.id}/status`, { key: s.org.key, body: { status: "active" } })).status).toBe(200);
    const restored = await post(s, agentPath(s), { phone_number: CALLEE, initial_context: CONTEXT });
    expect(restored.status).toBe(200);
    expect(restored.json.status).toBe("initiated");

    const bare = await createOrg();
    const agent = await createAgent(bare);
    const none = await call("POST", `/api/v1/public/agent/${agent.workflow_uuid}`, { key: bare.key, body: { phone_number: CALLEE, initial_context: CONTEXT } });
    expect(none.status).toBe(409);
    expect(none.json).toEqual({ detail: "No telephony configuration is set as default" });

    // A carrier configuration without a caller-ID number is not ready for outbound.
    const acct = await simAccount("twilio");
    expect(
      (await call("POST", "/api/v1/organizations/telephony-configs", { key: bare.key, body: { name: "no-numbers", config: configFor(acct) } })).status,
    ).toBe(200);
    const notReady = await call("POST", `/api/v1/public/agent/${agent.workflow_uuid}`, {
      key: bare.key,
      body: { phone_number: CALLEE, initial_context: CONTEXT },
    });
    expect(notReady.status).toBe(409);
    expect(notReady.json.detail).toMatch(/^Telephony configuration is not ready for outbound calls: .*caller_id/);
    expect((await simRequests(acct)).length).toBe(0);
  });

  it("422 for a number the configuration cannot dial, a bad initial_context, a missing number or bad JSON", async () => {
    const s = await setup("twilio");
    const cases: Array<[unknown, (string | number)[], string]> = [
      [{ phone_number: "1001" }, ["body", "phone_number"], "value_error"],
      [{ phone_number: "+1 415 555 0123" }, ["body", "phone_number"], "value_error"],
      [{ phone_number: "+999123" }, ["body", "phone_number"], "value_error"],
      [{ phone_number: CALLEE, initial_context: ["a"] }, ["body", "initial_context"], "record_type"],
      [{ phone_number: CALLEE, initial_context: "name=Ada" }, ["body", "initial_context"], "record_type"],
      [{ initial_context: {} }, ["body", "phone_number"], "missing"],
      [{ phone_number: 14155550123 }, ["body", "phone_number"], "string_type"],
    ];
    for (const [body, loc, type] of cases) {
      const res = await post(s, workflowPath(s), body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.json.detail[0], JSON.stringify(body)).toMatchObject({ loc, type });
    }
    const malformed = await call("POST", agentPath(s), { key: s.org.key, raw: "{not json" });
    expect(malformed.status).toBe(422);
    expect(malformed.json.detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
    expect(await originates(s)).toBe(0);
  });

  it("an ari configuration also dials extensions, SIP URIs and dial strings", async () => {
    // A dial string to another trunk only in a form the configuration allows (the calling policy judges the rest).
    const s = await setup("ari", { allowed_dial_strings: ["PJSIP/{number}@sipp"] });
    for (const number of ["1001", "sip:alice@pbx.example.test", "PJSIP/200@sipp"]) {
      const res = await post(s, workflowPath(s), { phone_number: number, initial_context: CONTEXT });
      expect(res.status, `${number}: ${res.text}`).toBe(200);
    }
    const endpoints = (await simRequests(s.acct)).filter((r) => r.method === "POST").map((r) => r.query.endpoint[0]);
    expect(endpoints).toEqual(["PJSIP/1001", "PJSIP/sip:alice@pbx.example.test", "PJSIP/200@sipp"]);
  });

  it("routes through telephony_configuration_id (workflow endpoint); unknown or foreign ids are 404", async () => {
    const s = await setup("twilio");
    const plivo = await setup("plivo", {}, s.org, "+14155550199"); // becomes the default
    const viaDefault = await post(s, workflowPath(s), { phone_number: CALLEE, initial_context: CONTEXT });
    expect((await runRow(viaDefault.json.workflow_run_id)).provider).toBe("plivo");
    const explicit = await post(s, workflowPath(s), { phone_number: CALLEE, initial_context: CONTEXT, telephony_configuration_id: s.configId });
    expect(explicit.status, explicit.text).toBe(200);
    expect(await runRow(explicit.json.workflow_run_id)).toMatchObject({ provider: "twilio", telephonyConfigurationId: s.configId });
    const nullId = await post(s, workflowPath(s), { phone_number: CALLEE, initial_context: CONTEXT, telephony_configuration_id: null });
    expect((await runRow(nullId.json.workflow_run_id)).telephonyConfigurationId).toBe(plivo.configId);
    // The first endpoint takes no routing: the field is unknown there (422), not silently ignored.
    const refused = await post(s, agentPath(s), { phone_number: CALLEE, initial_context: CONTEXT, telephony_configuration_id: s.configId });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json.detail).toMatchObject([{ loc: ["body", "telephony_configuration_id"], type: "extra_forbidden" }]);

    const foreign = await setup("twilio");
    for (const id of [999999, foreign.configId]) {
      const res = await post(s, workflowPath(s), { phone_number: CALLEE, initial_context: CONTEXT, telephony_configuration_id: id });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ detail: "Telephony configuration not found" });
    }
    const bad = await post(s, workflowPath(s), { phone_number: CALLEE, initial_context: CONTEXT, telephony_configuration_id: "1" });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["body", "telephony_configuration_id"]);
  });

  it("429 with Retry-After when the organization is at its cap: two parallel requests at a cap of one", async () => {
    const s = await setup("twilio");
    await organizationStub(env, s.org.id).setCap(1);
    const [a, b] = await Promise.all([
      post(s, agentPath(s), { phone_number: CALLEE, initial_context: CONTEXT }),
      post(s, workflowPath(s), { phone_number: CALLEE, initial_context: CONTEXT }),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 429]);
    const refused = a.status === 429 ? a : b;
    const placed = a.status === 200 ? a : b;
    expect(refused.json).toEqual({ detail: "Concurrent call limit reached" });
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    expect(await originates(s)).toBe(1);
    // The refused request left no run behind.
    expect((await call("GET", `/api/v1/workflow/${s.agent.id}/runs`, { key: s.org.key })).json.items).toHaveLength(1);

    // The final status frees the slot.
    await deliverAll(await play((await runRow(placed.json.workflow_run_id)).providerCallId!, "busy"));
    expect(await organizationStub(env, s.org.id).usage()).toEqual({ inUse: 0, cap: 1 });
    expect((await post(s, agentPath(s), { phone_number: CALLEE, initial_context: CONTEXT })).status).toBe(200);
  });

  it("a carrier refusal frees the slot too", async () => {
    const s = await setup("twilio");
    await organizationStub(env, s.org.id).setCap(1);
    await simFault(s.acct, "originate", 500, "boom");
    expect((await post(s, agentPath(s), { phone_number: CALLEE, initial_context: CONTEXT })).status).toBe(502);
    expect((await organizationStub(env, s.org.id).usage()).inUse).toBe(0);
  });
});

describe("Idempotency-Key", () => {
  it("the same key and body within 24 h returns the first response without a second call", async () => {
    const s = await setup("twilio");
    const body = { phone_number: CALLEE, initial_context: { first_name: "Ada", topic: "x" } };
    const first = await post(s, agentPath(s), body, { "Idempotency-Key": "k-1" });
    expect(first.status).toBe(200);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    // Same body with keys in another order is the same request.
    const again = await post(s, agentPath(s), { initial_context: { topic: "x", first_name: "Ada" }, phone_number: CALLEE }, { "Idempotency-Key": "k-1" });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await originates(s)).toBe(1);

    // Another key is another call; another organization's same key is its own.
    expect((await post(s, agentPath(s), body, { "Idempotency-Key": "k-2" })).json.workflow_run_id).not.toBe(first.json.workflow_run_id);
    expect(await originates(s)).toBe(2);
  });

  it("the same key with another body (or another endpoint) is 422; a malformed key is 422", async () => {
    const s = await setup("twilio");
    expect((await post(s, agentPath(s), { phone_number: CALLEE, initial_context: CONTEXT }, { "Idempotency-Key": "k" })).status).toBe(200);
    for (const res of [
      await post(s, agentPath(s), { phone_number: "+14155550124", initial_context: CONTEXT }, { "Idempotency-Key": "k" }),
      await post(s, workflowPath(s), { phone_number: CALLEE, initial_context: CONTEXT }, { "Idempotency-Key": "k" }),
    ]) {
      expect(res.status).toBe(422);
      expect(res.json.detail[0]).toMatchObject({ loc: ["header", "Idempotency-Key"], type: "idempotency_key_reused" });
    }
    const bad = await post(s, agentPath(s), { phone_number: CALLEE, initial_context: CONTEXT }, { "Idempotency-Key": "x".repeat(256) });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["header", "Idempotency-Key"]);
    expect(await originates(s)).toBe(1);
  });

  it("a 502 is replayed (no second call); a refusal that placed nothing (429) is not remembered", async () => {
    const s = await setup("twilio");
    await simFault(s.acct, "originate", 500, "carrier down", 5);
    const a = await post(s, agentPath(s), { phone_number: CALLEE, initial_context: CONTEXT }, { "Idempotency-Key": "once" });
    const b = await post(s, agentPath(s), { phone_number: CALLEE, initial_context: CONTEXT }, { "Idempotency-Key": "once" });
    expect([a.status, b.status]).toEqual([502, 502]);
    expect(b.json).toEqual(a.json);
    expect(await originates(s)).toBe(1);

    const t = await setup("twilio");
    await organizationStub(env, t.org.id).setCap(1);
    const held = await post(t, agentPath(t), { phone_number: CALLEE, initial_context: CONTEXT });
    const full = await post(t, agentPath(t), { phone_number: CALLEE, initial_context: CONTEXT }, { "Idempotency-Key": "later" });
    expect(full.status).toBe(429);
    await deliverAll(await play((await runRow(held.json.workflow_run_id)).providerCallId!, "busy"));
    const retried = await post(t, agentPath(t), { phone_number: CALLEE, initial_context: CONTEXT }, { "Idempotency-Key": "later" });
    expect(retried.status).toBe(200);
  });
});

describe("GET /workflow/{workflow_id}/runs", () => {
  it("lists an agent's runs newest first with cursor pagination, and reads one; other organizations see 404", async () => {
    const s = await setup("twilio");
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await startCall(s));
    const page1 = await call("GET", `/api/v1/workflow/${s.agent.id}/runs?limit=2`, { key: s.org.key });
    expect(page1.status).toBe(200);
    expect(page1.json.items.map((r: { id: number }) => r.id)).toEqual([ids[2], ids[1]]);
    expect(page1.json.next_cursor).toEqual(expect.any(String));
    const page2 = await call("GET", `/api/v1/workflow/${s.agent.id}/runs?limit=2&cursor=${page1.json.next_cursor}`, { key: s.org.key });
    expect(page2.json).toEqual({ items: [expect.objectContaining({ id: ids[0] })], next_cursor: null });
    const one = await call("GET", `/api/v1/workflow/${s.agent.id}/runs/${ids[0]}`, { key: s.org.key });
    expect(Object.keys(one.json).sort()).toEqual(
      [
        "id",
        "name",
        "workflow_id",
        "workflow_uuid",
        "campaign_id",
        "phone_number",
        "from_number",
        "initial_context",
        "telephony_configuration_id",
        "provider",
        "provider_call_id",
        "status",
        "answered_by",
        "error",
        "notes",
        "end_reason",
        "created_at",
        "started_at",
        "answered_at",
        "ended_at",
        "duration_seconds",
        "recording_url",
        "transcript",
        "gathered_context",
        "disposition",
        "usage",
        "created_by_key_id",
        "direction",
        "transfer",
        "analysis",
        "tool_calls",
        "media",
        "conversation",
        "amd",
        "amd_class",
      ].sort(),
    );
    expect(one.json).toMatchObject({ id: ids[0], name: `WR-${ids[0]}`, status: "initiated", phone_number: CALLEE, initial_context: { first_name: "Ada" } });
    // Not yet answered: nobody judged who answered.
    expect(one.json.amd).toBeNull();
    expect(one.json.amd_class).toBeNull();

    const other = await createOrg();
    expect((await call("GET", `/api/v1/workflow/${s.agent.id}/runs`, { key: other.key })).status).toBe(404);
    expect((await call("GET", `/api/v1/workflow/${s.agent.id}/runs/${ids[0]}`, { key: other.key })).status).toBe(404);
    const otherAgent = await createAgent(s.org);
    const mismatch = await call("GET", `/api/v1/workflow/${otherAgent.id}/runs/${ids[0]}`, { key: s.org.key });
    expect(mismatch.status).toBe(404);
    expect(mismatch.json).toEqual({ detail: "Workflow run not found" });
    expect((await call("GET", `/api/v1/workflow/${s.agent.id}/runs?cursor=zzz`, { key: s.org.key })).status).toBe(422);
  });
});
