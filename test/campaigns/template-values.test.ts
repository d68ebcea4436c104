// A template variable the agent uses is never spoken empty: a single call or a CSV row that leaves it blank is a
// located 422, unless the agent gives it a default (template_context_variables), which then fills it in the call.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import { call } from "../helpers";
import { runRow, setup, simRequests, type Setup } from "../calls/support";
import { CAMPAIGNS, createCampaign, upload } from "./support";

const world = (s: Setup) => ({ ...s.org, workflowId: s.agent.id, configId: s.configId });
const single = (s: Setup, initial_context: Record<string, unknown>) =>
  call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, { key: s.org.key, body: { phone_number: "+14155550123", initial_context } });
const originates = async (s: Setup) => (await simRequests(s.acct)).filter((r) => /Calls\.json$/.test(r.path)).length;
const withDefault = async (s: Setup, defaults: Record<string, unknown>) => {
  const res = await call("PUT", `/api/v1/workflow/${s.agent.id}`, { key: s.org.key, body: { template_context_variables: defaults } });
  expect(res.status, res.text).toBe(200);
};

describe("an empty template value", () => {
  it("is a located 422 for a single call (empty or only spaces), and nothing is dialed", async () => {
    const s = await setup("twilio");
    for (const first_name of ["", "   "]) {
      const res = await single(s, { first_name });
      expect(res.status, res.text).toBe(422);
      expect(res.json.detail).toEqual([
        expect.objectContaining({ loc: ["body", "initial_context", "first_name"], type: "template_value_empty", ctx: { variable: "first_name" } }),
      ]);
    }
    expect((await single(s, {})).json.detail).toEqual([expect.objectContaining({ loc: ["body", "initial_context", "first_name"], type: "missing" })]);
    expect(await originates(s)).toBe(0);
  });

  it("is filled from the agent's default in a single call: blank or absent", async () => {
    const s = await setup("twilio");
    await withDefault(s, { first_name: "there" });
    for (const ctx of [{ first_name: "" }, {}]) {
      const res = await single(s, ctx);
      expect(res.status, res.text).toBe(200);
      expect((await runRow(res.json.workflow_run_id)).initialContext).toEqual({ first_name: "there" });
    }
    const own = await single(s, { first_name: "Ada" });
    expect((await runRow(own.json.workflow_run_id)).initialContext).toEqual({ first_name: "Ada" });
  });

  it("is a located 422 at its CSV row and column when the agent has no default, and nothing is created", async () => {
    const s = await setup("twilio");
    const file = ["phone_number,first_name", "+14155550101,Ada", "+14155550102,", "+14155550103,  "].join("\n");
    const res = await createCampaign(world(s), { source_url: await upload(s.org, file) });
    expect(res.status, res.text).toBe(422);
    expect(res.json.detail).toEqual([
      expect.objectContaining({ loc: ["body", "source_url", 3, "first_name"], type: "template_value_empty", input: "" }),
      expect.objectContaining({ loc: ["body", "source_url", 4, "first_name"], type: "template_value_empty", input: "  " }),
    ]);
    expect((await call("GET", CAMPAIGNS, { key: s.org.key })).json.items).toEqual([]);
  });

  it("passes a CSV import when the agent has a default, which the call then uses; the column may even be absent", async () => {
    const s = await setup("twilio");
    await withDefault(s, { first_name: "there" });
    const file = ["phone_number,first_name", "+14155550101,Ada", "+14155550102,"].join("\n");
    const res = await createCampaign(world(s), { source_url: await upload(s.org, file) });
    expect(res.status, res.text).toBe(200);
    const id = res.json.id as number;
    expect((await call("PATCH", `${CAMPAIGNS}/${id}`, { key: s.org.key, body: { rate_limit: 50 } })).status).toBe(200);
    expect((await call("POST", `${CAMPAIGNS}/${id}/start`, { key: s.org.key })).status).toBe(200);
    for (let i = 0; i < 4; i++) await runDurableObjectAlarm(env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(id))));
    const runs = await getDb(env).select().from(workflowRuns).where(eq(workflowRuns.campaignId, id)).all();
    expect(Object.fromEntries(runs.map((r) => [r.phoneNumber, r.initialContext]))).toEqual({
      "+14155550101": { first_name: "Ada" },
      "+14155550102": { first_name: "there" },
    });
    const noColumn = await createCampaign(world(s), { source_url: await upload(s.org, "phone_number\n+14155550104\n") });
    expect(noColumn.status, noColumn.text).toBe(200);
  });
});
