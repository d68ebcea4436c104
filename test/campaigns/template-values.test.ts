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

describe("a partial import (on_invalid: skip)", () => {
  const file = [
    "phone_number,first_name,company",
    "+14155550101,Ada,Acme",
    "+14155550102,,Blank Inc",
    "not-a-number,Bo,Broken",
    "+14155550101,Cy,Again",
    "+14155550105,Di,Fine",
  ].join("\n");
  const refusedCsv = (csv: string) => csv.split("\r\n").map((l) => l.split(","));

  it("creates the campaign from the rows that pass and returns the others as CSV with their row and reason", async () => {
    const s = await setup("twilio");
    const res = await createCampaign(world(s), { source_url: await upload(s.org, file), on_invalid: "skip" });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ state: "draft", total_rows: 2, refused: { rows: 3, truncated: false } });
    const lines = refusedCsv(res.json.refused.csv);
    expect(lines.map((l) => l.slice(0, 4))).toEqual([
      ["phone_number", "first_name", "company", "row"],
      ["+14155550102", "", "Blank Inc", "3"],
      ["not-a-number", "Bo", "Broken", "4"],
      ["+14155550101", "Cy", "Again", "5"],
    ]);
    expect(lines[0][4]).toBe("reason");
    expect(lines[1][4]).toMatch(/\{\{first_name\}\}.*no default/);
    expect(lines[3][4]).toMatch(/Duplicate phone number.*row 2/);
    const contacts = (await call("GET", `${CAMPAIGNS}/${res.json.id}/contacts`, { key: s.org.key })).json.items;
    expect(contacts.map((c: { phone_number: string }) => c.phone_number)).toEqual(["+14155550101", "+14155550105"]);
  });

  it("is all or nothing by default, and a file whose rows all fail is still a 422", async () => {
    const s = await setup("twilio");
    const all = await createCampaign(world(s), { source_url: await upload(s.org, file) });
    expect(all.status).toBe(422);
    expect(all.json.detail[0].ctx.total_errors).toBe(3);
    const none = await createCampaign(world(s), { source_url: await upload(s.org, "phone_number,first_name\nnope,Ada\n"), on_invalid: "skip" });
    expect(none.status).toBe(422);
    expect((await call("GET", CAMPAIGNS, { key: s.org.key })).json.items).toEqual([]);
  });

  it("appends the rows that pass to a campaign and returns the others", async () => {
    const s = await setup("twilio");
    const created = await createCampaign(world(s), { source_url: await upload(s.org, "phone_number,first_name\n+14155550101,Ada\n") });
    expect(created.status, created.text).toBe(200);
    const more = ["phone_number,first_name", "+14155550107,Ed", "+14155550108,", "+14155550101,Ada"].join("\n");
    const res = await call("POST", `${CAMPAIGNS}/${created.json.id}/contacts`, {
      key: s.org.key,
      body: { source_url: await upload(s.org, more), on_invalid: "skip" },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ added: 1, skipped_existing: 1, file_rows: 3, total_rows: 2, refused: { rows: 1, truncated: false } });
    expect(refusedCsv(res.json.refused.csv)[1].slice(0, 3)).toEqual(["+14155550108", "", "3"]);
  });
});
