// An agent whose definition fails validation may be saved (a draft) but takes no calls and no campaigns:
// 409 naming the problems, with the full list in `errors`. A running campaign whose agent is edited into an invalid
// definition pauses at its next dial (as for an archived agent); resume, like start, refuses it until it is fixed.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import { call } from "../helpers";
import { createCampaign, goodCsv, upload } from "../campaigns/support";
import { CALLEE, campaignId, campaignObject, setup, simRequests, type Setup } from "./support";
import { unwrap } from "../../src/campaigns/errors";

/** The agent's definition with its end node removed: saved fine, invalid for calls (no endCall, a dangling edge). */
function brokenDefinition(s: Setup) {
  const def = structuredClone(s.agent.workflow_definition);
  def.nodes = def.nodes.filter((n) => n.type !== "endCall");
  return def;
}

async function breakAgent(s: Setup) {
  const res = await call("PUT", `/api/v1/workflow/${s.agent.id}`, { key: s.org.key, body: { workflow_definition: brokenDefinition(s) } });
  expect(res.status, res.text).toBe(200);
  const check = await call("POST", `/api/v1/workflow/${s.agent.id}/validate`, { key: s.org.key });
  expect(check.json.is_valid).toBe(false);
  return check.json.errors as unknown[];
}

const runsOf = async (workflowId: number) => getDb(env).select().from(workflowRuns).where(eq(workflowRuns.workflowId, workflowId)).all();

function expectInvalidAgent(res: { status: number; json: any; text: string }, errors: unknown[]) {
  expect(res.status, res.text).toBe(409);
  expect(res.json.detail).toMatch(/^Workflow definition is invalid: /);
  expect(res.json.detail).toContain("The workflow needs at least one endCall node");
  expect(res.json.detail).toContain(`/validate`);
  expect(res.json.errors).toEqual(errors);
}

describe("an agent with an invalid definition", () => {
  it("is saved, but public calls (by UUID, by trigger path, by workflow endpoint) answer 409 with its problems and place nothing", async () => {
    const s = await setup("twilio");
    const errors = await breakAgent(s);
    const trigger = s.agent.workflow_definition.nodes.find((n) => n.type === "apiTrigger")!.data.trigger_path;
    for (const path of [
      `/api/v1/public/agent/${s.agent.workflow_uuid}`,
      `/api/v1/public/agent/${trigger}`,
      `/api/v1/public/agent/workflow/${s.agent.workflow_uuid}`,
    ]) {
      const res = await call("POST", path, { key: s.org.key, body: { phone_number: CALLEE, initial_context: { first_name: "Ada" } } });
      expectInvalidAgent(res, errors);
    }
    expect(await runsOf(s.agent.id)).toEqual([]);
    expect((await simRequests(s.acct)).filter((r) => /Calls\.json$/.test(r.path))).toEqual([]);

    // Fixed, it calls again.
    const fixed = await call("PUT", `/api/v1/workflow/${s.agent.id}`, { key: s.org.key, body: { workflow_definition: s.agent.workflow_definition } });
    expect(fixed.status).toBe(200);
    const ok = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: s.org.key,
      body: { phone_number: CALLEE, initial_context: { first_name: "Ada" } },
    });
    expect(ok.status, ok.text).toBe(200);
  });

  it("campaign create refuses it (nothing created); a draft whose agent broke cannot start; fixed, it starts", async () => {
    const s = await setup("twilio");
    const w = { ...s.org, workflowId: s.agent.id, configId: s.configId };
    const key = await upload(s.org, goodCsv(2));
    const draft = await createCampaign(w, { source_url: key });
    expect(draft.status, draft.text).toBe(200);

    const errors = await breakAgent(s);
    expectInvalidAgent(await createCampaign(w, { name: "second", source_url: key }), errors);
    const list = await call("GET", "/api/v1/campaign", { key: s.org.key });
    expect(list.json.items.map((c: { id: number }) => c.id)).toEqual([draft.json.id]);

    expectInvalidAgent(await call("POST", `/api/v1/campaign/${draft.json.id}/start`, { key: s.org.key }), errors);
    expect((await call("GET", `/api/v1/campaign/${draft.json.id}`, { key: s.org.key })).json.state).toBe("draft");

    await call("PUT", `/api/v1/workflow/${s.agent.id}`, { key: s.org.key, body: { workflow_definition: s.agent.workflow_definition } });
    const started = await call("POST", `/api/v1/campaign/${draft.json.id}/start`, { key: s.org.key });
    expect(started.status, started.text).toBe(200);
    expect(started.json.state).toBe("running");
  });

  it("a running campaign whose agent is edited into an invalid definition pauses at its next dial (no call placed), saying why", async () => {
    const s = await setup("twilio");
    const id = campaignId();
    const stub = await campaignObject(s, id, { enabled: false }, [
      { row: 2, phone_number: CALLEE, initial_context: { first_name: "Cy" }, greeting_override: null },
    ]);
    await breakAgent(s);
    await stub.start();
    for (let i = 0; i < 5 && unwrap(await stub.snapshot()).state === "running"; i++) await runDurableObjectAlarm(stub);
    expect(unwrap(await stub.snapshot()).state).toBe("paused");
    const logs = unwrap(await stub.logs(10)).items as { event: string; message: string }[];
    expect(logs.find((l) => l.event === "dial_failed")?.message).toMatch(/Workflow definition is invalid/);
    expect(await runsOf(s.agent.id)).toEqual([]);
    expect((await simRequests(s.acct)).filter((r) => /Calls\.json$/.test(r.path))).toEqual([]);
  });
});

describe("a single call and the agent's template variables", () => {
  it("is a 422 naming each variable initial_context lacks (as a CSV column would be), and places nothing", async () => {
    const s = await setup("twilio");
    for (const body of [
      { phone_number: CALLEE },
      { phone_number: CALLEE, initial_context: { firstname: "Ada" } },
      { phone_number: CALLEE, initial_context: { first_name: null } },
    ]) {
      const res = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, { key: s.org.key, body });
      expect(res.status, res.text).toBe(422);
      expect(res.json.detail).toEqual([
        expect.objectContaining({ loc: ["body", "initial_context", "first_name"], type: "missing", ctx: { variable: "first_name" } }),
      ]);
      expect(res.json.detail[0].msg).toContain("{{first_name}}");
    }
    expect(await runsOf(s.agent.id)).toEqual([]);
    // Names compare as rendering finds them: case-insensitively.
    const ok = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: s.org.key,
      body: { phone_number: CALLEE, initial_context: { First_Name: "Ada" } },
    });
    expect(ok.status, ok.text).toBe(200);
  });
});
