// POST /public/trigger/{trigger_path}: an API Trigger node's URL starts a call for its agent with the public call
// endpoint's body and rules (API key, configuration routing, Idempotency-Key, the cap, the calling policy); an Agent
// UUID, another organization's path or an archived agent are refused as there.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { organizationStub } from "../../src/organizations/organization-object";
import { call, createOrg } from "../helpers";
import { CALLEE, CONTEXT, runRow, setup, simRequests, type Setup } from "./support";

const triggerOf = (s: Setup) => s.agent.workflow_definition.nodes.find((n) => n.type === "apiTrigger")!.data.trigger_path as string;
const triggerUrl = (path: string) => `/api/v1/public/trigger/${path}`;
const post = (s: Setup, path: string, body: unknown, headers: Record<string, string> = {}) => call("POST", triggerUrl(path), { key: s.org.key, body, headers });
const originates = async (s: Setup) => (await simRequests(s.acct)).filter((r) => r.method === "POST" && /Calls\.json$/.test(r.path)).length;

describe("POST /public/trigger/{trigger_path}", () => {
  it("starts a call for the node's agent, through the configuration asked for", async () => {
    const s = await setup("twilio");
    const res = await post(s, triggerOf(s), { phone_number: CALLEE, initial_context: { first_name: "Ada" }, telephony_configuration_id: s.configId });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ status: "initiated", workflow_run_id: expect.any(Number), workflow_run_name: `WR-${res.json.workflow_run_id}` });
    const run = await runRow(res.json.workflow_run_id);
    expect(run).toMatchObject({ workflowId: s.agent.id, telephonyConfigurationId: s.configId, phoneNumber: CALLEE, direction: "outbound" });
    expect(await originates(s)).toBe(1);
  });

  it("401 without a key; 404 for an Agent UUID, an unknown path or another organization's; 409 archived", async () => {
    const s = await setup("twilio");
    const none = await call("POST", triggerUrl(triggerOf(s)), { body: { phone_number: CALLEE, initial_context: CONTEXT } });
    expect(none.status).toBe(401);
    const other = await createOrg();
    for (const res of [
      await post(s, s.agent.workflow_uuid, { phone_number: CALLEE, initial_context: CONTEXT }),
      await post(s, "no-such-path", { phone_number: CALLEE, initial_context: CONTEXT }),
      await call("POST", triggerUrl(triggerOf(s)), { key: other.key, body: { phone_number: CALLEE, initial_context: CONTEXT } }),
    ]) {
      expect(res.status, res.text).toBe(404);
      expect(res.json).toEqual({ detail: "Workflow not found" });
    }
    expect((await call("PUT", `/api/v1/workflow/${s.agent.id}/status`, { key: s.org.key, body: { status: "archived" } })).status).toBe(200);
    const archived = await post(s, triggerOf(s), { phone_number: CALLEE, initial_context: CONTEXT });
    expect(archived.status).toBe(409);
    expect(await originates(s)).toBe(0);
  });

  it("422 for a body the public endpoint refuses: an unknown field, a bad number, a destination the policy blocks", async () => {
    const s = await setup("twilio");
    const extra = await post(s, triggerOf(s), { phone_number: CALLEE, initial_context: CONTEXT, surprise: 1 });
    expect(extra.status).toBe(422);
    expect(extra.json.detail[0]).toMatchObject({ loc: ["body", "surprise"], type: "extra_forbidden" });
    const bad = await post(s, triggerOf(s), { phone_number: "not a number", initial_context: CONTEXT });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["body", "phone_number"]);
    const premium = await post(s, triggerOf(s), { phone_number: "+19005550100", initial_context: CONTEXT });
    expect(premium.status).toBe(422);
    expect(premium.json.detail[0]).toMatchObject({ loc: ["body", "phone_number"], type: "destination_not_allowed" });
    expect(await originates(s)).toBe(0);
  });

  it("Idempotency-Key: the same key and body answer the first call again; another body is 422", async () => {
    const s = await setup("twilio");
    const body = { phone_number: CALLEE, initial_context: CONTEXT };
    const first = await post(s, triggerOf(s), body, { "Idempotency-Key": "t-1" });
    expect(first.status, first.text).toBe(200);
    const again = await post(s, triggerOf(s), body, { "Idempotency-Key": "t-1" });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    const reused = await post(s, triggerOf(s), { ...body, phone_number: "+14155550124" }, { "Idempotency-Key": "t-1" });
    expect(reused.status).toBe(422);
    expect(reused.json.detail[0]).toMatchObject({ loc: ["header", "Idempotency-Key"], type: "idempotency_key_reused" });
    expect(await originates(s)).toBe(1);
  });

  it("429 at the organization's cap, counted with the other public calls", async () => {
    const s = await setup("twilio");
    await organizationStub(env, s.org.id).setCap(1);
    expect(
      (await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, { key: s.org.key, body: { phone_number: CALLEE, initial_context: CONTEXT } }))
        .status,
    ).toBe(200);
    const full = await post(s, triggerOf(s), { phone_number: CALLEE, initial_context: CONTEXT });
    expect(full.status).toBe(429);
    expect(full.json).toEqual({ detail: "Concurrent call limit reached" });
    expect(Number(full.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
  });
});
