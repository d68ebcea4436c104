// Campaign records over HTTP: create with the create checks in order (all or nothing), read, list, PATCH.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setCallStarter } from "../../src/campaigns/engine/call-starter";
import { call, createOrg } from "../helpers";
import { CAMPAIGNS, createCampaign, createConfig, createWorkflow, goodCsv, phone, upload, world, type World } from "./support";

const CAMPAIGN_FIELDS = [
  "id",
  "name",
  "workflow_id",
  "workflow_name",
  "state",
  "source_type",
  "source_id",
  "total_rows",
  "imported_rows",
  "import_error",
  "import_refused",
  "processed_rows",
  "failed_rows",
  "created_at",
  "started_at",
  "completed_at",
  "retry_config",
  "max_concurrency",
  "rate_limit",
  "schedule_config",
  "circuit_breaker",
  "voicemail_action",
  "require_passing_tests",
  "executed_count",
  "total_queued_count",
  "parent_campaign_id",
  "redialed_campaign_id",
  "telephony_configuration_id",
  "telephony_configuration_name",
  "created_by_key_id",
  "logs",
].sort();

const stubOf = (id: number) => env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(id)));

/** Rows the campaign's object holds (its SQLite), in row order. */
async function storedContacts(id: number) {
  return runInDurableObject(stubOf(id), async (_o, state) =>
    state.storage.sql
      .exec<{ row: number; phone_number: string; initial_context: string; greeting_override: string | null }>(
        "SELECT row, phone_number, initial_context, greeting_override FROM contacts ORDER BY row",
      )
      .toArray(),
  );
}

/** Whether the object holds anything at all (a campaign row or contacts). */
async function objectIsBlank(id: number) {
  return runInDurableObject(stubOf(id), async (_o, state) => {
    const tables = state.storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('campaign', 'contacts')")
      .toArray();
    let rows = 0;
    for (const t of tables) rows += state.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${t.name}`).one().n;
    return rows === 0;
  });
}

async function campaignRows(orgId: number) {
  const r = await env.DB.prepare("SELECT id, state FROM campaigns WHERE org_id = ? ORDER BY id").bind(orgId).all<{ id: number; state: string }>();
  return r.results;
}

const lastCampaignId = async () => (await env.DB.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'campaigns'").first<{ seq: number }>())?.seq ?? 0;

afterEach(() => setCallStarter(null));

describe("POST /campaign/create", () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });

  it("creates a draft campaign carrying every field of the campaign object, with its contacts in the object's storage", async () => {
    const csv =
      "phone_number,first_name,company,greeting_override_type,greeting_override_text\n" +
      "+14155550100,Ada,Acme,,\n" +
      '+14155550101,Bob,"Widgets, Inc.",text,Hi {{first_name}}\n';
    const key = await upload(w, csv);
    const res = await createCampaign(w, { source_url: key, retry_config: { max_retries: 3 } });
    expect(res.status, res.text).toBe(200);
    const c = res.json;
    expect(Object.keys(c).sort()).toEqual(CAMPAIGN_FIELDS);
    expect(c).toMatchObject({
      name: "Spring outreach",
      workflow_id: w.workflowId,
      state: "draft",
      source_type: "csv",
      source_id: key,
      total_rows: 2,
      processed_rows: 0,
      failed_rows: 0,
      started_at: null,
      completed_at: null,
      retry_config: { enabled: true, max_retries: 3, retry_delay_seconds: 120, retry_on_busy: true, retry_on_no_answer: true, retry_on_voicemail: false },
      max_concurrency: 10,
      rate_limit: 1,
      schedule_config: null,
      circuit_breaker: { enabled: false, failure_threshold: 0.5, window_seconds: 120, min_calls_in_window: 5 },
      executed_count: 0,
      total_queued_count: 2,
      parent_campaign_id: null,
      redialed_campaign_id: null,
      telephony_configuration_id: w.configId,
    });
    expect(typeof c.workflow_name).toBe("string");
    expect(typeof c.telephony_configuration_name).toBe("string");
    expect(c.created_at).toMatch(/Z$/);
    expect(c.logs.map((l: { event: string }) => l.event)).toEqual(expect.arrayContaining(["campaign_created", "source_sync_completed"]));

    expect(await storedContacts(c.id)).toEqual([
      { row: 2, phone_number: "+14155550100", initial_context: JSON.stringify({ first_name: "Ada", company: "Acme" }), greeting_override: null },
      {
        row: 3,
        phone_number: "+14155550101",
        initial_context: JSON.stringify({ first_name: "Bob", company: "Widgets, Inc." }),
        greeting_override: JSON.stringify({ type: "text", text: "Hi {{first_name}}" }),
      },
    ]);
    const row = await env.DB.prepare("SELECT state, total_rows, source_id FROM campaigns WHERE id = ?").bind(c.id).first();
    expect(row).toEqual({ state: "draft", total_rows: 2, source_id: key });
  });

  it("accepts source_id as an alias of source_url, and settings within their limits", async () => {
    const key = await upload(w, goodCsv(3));
    const res = await createCampaign(w, {
      source_id: key,
      max_concurrency: 100,
      rate_limit: 50,
      schedule_config: { timezone: "Europe/Paris", slots: [{ day_of_week: 0, start_time: "09:00", end_time: "24:00" }] },
      circuit_breaker: { enabled: true, failure_threshold: 0.2 },
      telephony_configuration_id: w.configId,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({
      source_id: key,
      total_rows: 3,
      max_concurrency: 100,
      rate_limit: 50,
      schedule_config: { enabled: true, timezone: "Europe/Paris", slots: [{ day_of_week: 0, start_time: "09:00", end_time: "24:00" }] },
      circuit_breaker: { enabled: true, failure_threshold: 0.2, window_seconds: 120, min_calls_in_window: 5 },
    });
  });

  it("validates the body (422 with locations) before anything else", async () => {
    const key = await upload(w, goodCsv(1));
    const cases: [Record<string, unknown>, (string | number)[], string][] = [
      [{ name: "", source_url: key }, ["body", "name"], "string_too_short"],
      [{ name: "x".repeat(256), source_url: key }, ["body", "name"], "string_too_long"],
      [{ source_url: key, max_concurrency: 0 }, ["body", "max_concurrency"], "greater_than_equal"],
      [{ source_url: key, max_concurrency: 101 }, ["body", "max_concurrency"], "less_than_equal"],
      [{ source_url: key, rate_limit: 51 }, ["body", "rate_limit"], "less_than_equal"],
      [{ source_url: key, retry_config: { max_retries: 11 } }, ["body", "retry_config", "max_retries"], "less_than_equal"],
      [{ source_url: key, retry_config: { retry_delay_seconds: 29 } }, ["body", "retry_config", "retry_delay_seconds"], "greater_than_equal"],
      [
        { source_url: key, schedule_config: { timezone: "Mars/Olympus", slots: [{ day_of_week: 0, start_time: "09:00", end_time: "10:00" }] } },
        ["body", "schedule_config", "timezone"],
        "value_error",
      ],
      [{ source_url: key, schedule_config: { slots: [] } }, ["body", "schedule_config", "slots"], "too_short"],
      [
        { source_url: key, schedule_config: { slots: Array.from({ length: 51 }, () => ({ day_of_week: 0, start_time: "09:00", end_time: "10:00" })) } },
        ["body", "schedule_config", "slots"],
        "too_long",
      ],
      [
        { source_url: key, schedule_config: { slots: [{ day_of_week: 0, start_time: "09:00", end_time: "25:00" }] } },
        ["body", "schedule_config", "slots", 0, "end_time"],
        "string_pattern_mismatch",
      ],
      [
        { source_url: key, schedule_config: { slots: [{ day_of_week: 0, start_time: "10:00", end_time: "10:00" }] } },
        ["body", "schedule_config", "slots", 0, "end_time"],
        "value_error",
      ],
      [
        { source_url: key, schedule_config: { slots: [{ day_of_week: 7, start_time: "09:00", end_time: "10:00" }] } },
        ["body", "schedule_config", "slots", 0, "day_of_week"],
        "less_than_equal",
      ],
      [{ source_url: key, circuit_breaker: { failure_threshold: 2 } }, ["body", "circuit_breaker", "failure_threshold"], "less_than_equal"],
      [{ source_url: key, source_type: "gsheet" }, ["body", "source_type"], "literal_error"],
      [{}, ["body", "source_url"], "missing"],
    ];
    for (const [body, loc, type] of cases) {
      const res = await createCampaign(w, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.json.detail[0], JSON.stringify(body)).toMatchObject({ loc, type });
    }
    const noWorkflow = await call("POST", `${CAMPAIGNS}/create`, { key: w.key, body: { name: "x", source_url: key } });
    expect(noWorkflow.json.detail[0]).toMatchObject({ loc: ["body", "workflow_id"], type: "missing", msg: "Field required" });
    const bad = await call("POST", `${CAMPAIGNS}/create`, { key: w.key, raw: "{nope" });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].type).toBe("json_invalid");
    expect(await call("POST", `${CAMPAIGNS}/create`, { body: { name: "x" } }).then((r) => r.status)).toBe(401);
    expect((await campaignRows(w.id)).filter((r) => r.state === "importing")).toEqual([]);
  });
});

describe("create checks, in their order, and nothing created on failure", () => {
  it("agent: unknown or another organization's (404), archived (409), before the configuration and the file", async () => {
    const org = await createOrg(); // no configuration, no file: the agent check must answer first
    const other = await world();
    const res = await call("POST", `${CAMPAIGNS}/create`, {
      key: org.key,
      body: { name: "x", workflow_id: other.workflowId, source_url: "campaigns/0/x/y.csv" },
    });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ detail: "Workflow not found" });

    const wf = await createWorkflow(org);
    expect((await call("PUT", `/api/v1/workflow/${wf}/status`, { key: org.key, body: { status: "archived" } })).status).toBe(200);
    const archived = await call("POST", `${CAMPAIGNS}/create`, { key: org.key, body: { name: "x", workflow_id: wf, source_url: "nope" } });
    expect(archived.status).toBe(409);
    expect(archived.json).toEqual({ detail: "Workflow is archived" });
    expect(await campaignRows(org.id)).toEqual([]);
  });

  it("configuration: none resolves (409), an unknown or another organization's id (404), before the file", async () => {
    const org = await createOrg();
    const wf = await createWorkflow(org);
    const none = await call("POST", `${CAMPAIGNS}/create`, { key: org.key, body: { name: "x", workflow_id: wf, source_url: "nope" } });
    expect(none.status).toBe(409);
    expect(none.json).toEqual({ detail: "No telephony configuration is set as default" });

    await createConfig(org, "twilio", false);
    await createConfig(org, "ari", false);
    const two = await call("POST", `${CAMPAIGNS}/create`, { key: org.key, body: { name: "x", workflow_id: wf, source_url: "nope" } });
    expect(two.status).toBe(409);

    const other = await world();
    const foreign = await call("POST", `${CAMPAIGNS}/create`, {
      key: org.key,
      body: { name: "x", workflow_id: wf, source_url: "nope", telephony_configuration_id: other.configId },
    });
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual({ detail: "Telephony configuration not found" });
    expect(await campaignRows(org.id)).toEqual([]);
  });

  it("file: another organization's key, an unknown key, or a made-up key (422), before the CSV", async () => {
    const w = await world();
    const other = await world();
    const foreignKey = await upload(other, goodCsv(2));
    const keys = [foreignKey, foreignKey.replace(`campaigns/${other.id}/`, `campaigns/${w.id}/`), "../../etc/passwd", `campaigns/${w.id}/`];
    for (const key of keys) {
      const res = await createCampaign(w, { source_url: key });
      expect(res.status, key).toBe(422);
      expect(res.json.detail).toEqual([{ loc: ["body", "source_url"], msg: expect.stringMatching(/No uploaded file/), type: "file_not_found", input: key }]);
    }
    expect(await campaignRows(w.id)).toEqual([]);
  });

  it("CSV: every problem located by row and column, and no campaign left behind", async () => {
    const w = await world();
    const csv = [
      "phone_number,first_name",
      "+14155550100,Ada",
      "+1 555 0100,Spaces",
      "a&b,Amp",
      '"+14155550102","=HYPERLINK(""http://x"")"',
      "+14155550100,Dup",
    ].join("\r\n");
    const res = await createCampaign(w, { source_url: await upload(w, csv) });
    expect(res.status).toBe(422);
    expect(res.json.detail.map((i: { loc: unknown[]; type: string }) => [i.loc, i.type])).toEqual([
      [["body", "source_url", 3, "phone_number"], "phone_number_invalid"],
      [["body", "source_url", 4, "phone_number"], "phone_number_invalid"],
      [["body", "source_url", 6, "phone_number"], "phone_number_duplicate"],
    ]);
    expect(res.json.detail[0].ctx).toEqual({ total_errors: 3 });
    expect(await campaignRows(w.id)).toEqual([]);
    const id = await lastCampaignId();
    expect(await objectIsBlank(id)).toBe(true);
  });

  it.each([
    ["an empty file", "\n", "csv_empty"],
    ["no header", "+14155550100,Ada\n", "missing"],
    ["a BOM and CRLF with a bad row", "\uFEFFphone_number,first_name\r\n12345,x\r\n", "phone_number_invalid"],
    ["invalid UTF-8", new Uint8Array([...new TextEncoder().encode("phone_number,first_name\n+14155550100,"), 0xc3, 0x28, 0x0a]), "csv_encoding"],
  ] as const)("CSV: %s is a 422 and creates nothing", async (_label, content, type) => {
    const w = await world();
    const res = await createCampaign(w, { source_url: await upload(w, content) });
    expect(res.status).toBe(422);
    expect(res.json.detail[0].type).toBe(type);
    expect(res.json.detail[0].loc.slice(0, 3)).toEqual(["body", "source_url", expect.any(Number)]);
    expect(await campaignRows(w.id)).toEqual([]);
  });

  it("template variables: one the agent uses that is not a column (422 at the header row)", async () => {
    const w = await world();
    const key = await upload(w, "phone_number,name\n+14155550100,Ada\n");
    const res = await createCampaign(w, { source_url: key });
    expect(res.status).toBe(422);
    expect(res.json.detail).toEqual([
      {
        loc: ["body", "source_url", 1, "first_name"],
        msg: 'The agent uses the template variable {{first_name}}, but the file has no column "first_name"',
        type: "missing_template_variable",
        ctx: { columns: ["phone_number", "name"], total_errors: 1 },
      },
    ]);
    expect(await campaignRows(w.id)).toEqual([]);
  });

  it("a failure after contacts were already stored (a duplicate past the first chunks) removes the campaign and wipes its object", async () => {
    const w = await world();
    const csv = goodCsv(30_000) + `${phone(5)},Again\n`; // more than one chunk (25,000 contacts) reaches the object
    const before = await lastCampaignId();
    const res = await createCampaign(w, { source_url: await upload(w, csv) });
    expect(res.status).toBe(422);
    expect(res.json.detail).toEqual([
      {
        loc: ["body", "source_url", 30_002, "phone_number"],
        msg: `Duplicate phone number: ${phone(5)} is already in row 7`,
        type: "phone_number_duplicate",
        input: phone(5),
        ctx: { first_row: 7, total_errors: 1 },
      },
    ]);
    const id = await lastCampaignId();
    expect(id).toBeGreaterThan(before);
    expect(await campaignRows(w.id)).toEqual([]);
    expect(await objectIsBlank(id)).toBe(true);
    expect((await call("GET", `${CAMPAIGNS}/${id}`, { key: w.key })).status).toBe(404);
  });

  it("the same file creates the campaign once it is fixed (ids are not reused)", async () => {
    const w = await world();
    const res = await createCampaign(w, { source_url: await upload(w, goodCsv(12_001)) });
    expect(res.status).toBe(200);
    expect(res.json.total_rows).toBe(12_001);
    expect((await storedContacts(res.json.id)).length).toBe(12_001);
  });

  it("an ari configuration takes extensions, SIP URIs and dial strings; a carrier does not", async () => {
    // A dial string in the configuration's own form (dial_string_template: PJSIP/{number}); others: pbx-policy.test.ts.
    const csv = "phone_number,first_name\n1001,a\nsip:bob@pbx.example.com,b\nPJSIP/2002,c\n";
    const ari = await world("ari");
    const ok = await createCampaign(ari, { source_url: await upload(ari, csv) });
    expect(ok.status, ok.text).toBe(200);
    expect((await storedContacts(ok.json.id)).map((c) => c.phone_number)).toEqual(["1001", "sip:bob@pbx.example.com", "PJSIP/2002"]);
    const carrier = await world("twilio");
    const refused = await createCampaign(carrier, { source_url: await upload(carrier, csv) });
    expect(refused.status).toBe(422);
    expect(refused.json.detail).toHaveLength(3);
  });
});

describe("Idempotency-Key on create", () => {
  it("replays the first response for the same key and body, and refuses the key with another body", async () => {
    const w = await world();
    const key = await upload(w, goodCsv(2));
    const headers = { "Idempotency-Key": `create-${crypto.randomUUID()}` };
    const first = await createCampaign(w, { source_url: key }, headers);
    expect(first.status).toBe(200);
    const again = await createCampaign(w, { source_url: key }, headers);
    expect(again.status).toBe(200);
    expect(again.json.id).toBe(first.json.id);
    expect((await campaignRows(w.id)).length).toBe(1);
    const other = await createCampaign(w, { source_url: key, name: "Other" }, headers);
    expect(other.status).toBe(422);
    expect(other.json.detail[0].loc).toEqual(["header", "Idempotency-Key"]);
  });
});

describe("GET /campaign/ and /campaign/{id}", () => {
  it("lists newest first with cursor pages and a state filter, only the organization's own", async () => {
    const w = await world();
    const other = await world();
    await createCampaign(other, { source_url: await upload(other, goodCsv(1)) });
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await createCampaign(w, { name: `c${i}`, source_url: await upload(w, goodCsv(1 + i)) });
      expect(res.status).toBe(200);
      ids.push(res.json.id);
    }
    const cancel = await call("POST", `${CAMPAIGNS}/${ids[0]}/cancel`, { key: w.key });
    expect(cancel.status, cancel.text).toBe(200);

    const all = await call("GET", `${CAMPAIGNS}/`, { key: w.key });
    expect(all.status).toBe(200);
    expect(all.json.items.map((c: { id: number }) => c.id)).toEqual([...ids].reverse());
    expect(all.json.next_cursor).toBeNull();
    // A listing reads D1 alone: no logs, nor what the object keeps of its import's refused rows.
    expect(Object.keys(all.json.items[0]).sort()).toEqual(CAMPAIGN_FIELDS.filter((f) => f !== "logs" && f !== "import_refused"));
    expect(all.json.items[0]).toMatchObject({ name: "c2", total_rows: 3, state: "draft" });

    const p1 = await call("GET", `${CAMPAIGNS}/?limit=2`, { key: w.key });
    expect(p1.json.items.map((c: { id: number }) => c.id)).toEqual([ids[2], ids[1]]);
    const p2 = await call("GET", `${CAMPAIGNS}/?limit=2&cursor=${p1.json.next_cursor}`, { key: w.key });
    expect(p2.json.items.map((c: { id: number }) => c.id)).toEqual([ids[0]]);
    expect(p2.json.next_cursor).toBeNull();

    const drafts = await call("GET", `${CAMPAIGNS}/?state=draft`, { key: w.key });
    expect(drafts.json.items.map((c: { id: number }) => c.id)).toEqual([ids[2], ids[1]]);
    const cancelled = await call("GET", `${CAMPAIGNS}?state=cancelled`, { key: w.key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json.items.map((c: { id: number; state: string }) => [c.id, c.state])).toEqual([[ids[0], "cancelled"]]);

    const badState = await call("GET", `${CAMPAIGNS}/?state=bogus`, { key: w.key });
    expect(badState.status).toBe(422);
    expect(badState.json.detail[0].loc).toEqual(["query", "state"]);
    expect((await call("GET", `${CAMPAIGNS}/?limit=101`, { key: w.key })).status).toBe(422);
    expect((await call("GET", `${CAMPAIGNS}/?cursor=@@`, { key: w.key })).status).toBe(422);
  });

  it("reads one campaign; another organization's or an unknown id is 404", async () => {
    const w = await world();
    const other = await world();
    const created = await createCampaign(w, { source_url: await upload(w, goodCsv(2)) });
    const got = await call("GET", `${CAMPAIGNS}/${created.json.id}`, { key: w.key });
    expect(got.status).toBe(200);
    expect(got.json).toEqual(created.json);
    for (const [key, id] of [
      [other.key, created.json.id],
      [w.key, 999_999_999],
    ] as const) {
      const res = await call("GET", `${CAMPAIGNS}/${id}`, { key });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ detail: "Campaign not found" });
    }
    expect((await call("GET", `${CAMPAIGNS}/abc`, { key: w.key })).status).toBe(404);
  });
});

describe("PATCH /campaign/{id}", () => {
  async function draft(w: World) {
    const res = await createCampaign(w, { source_url: await upload(w, goodCsv(3)) });
    expect(res.status).toBe(200);
    return res.json.id as number;
  }
  const patch = (w: World, id: number, body: unknown) => call("PATCH", `${CAMPAIGNS}/${id}`, { key: w.key, body });

  it("in draft: merges what is sent over the current settings and keeps the rest", async () => {
    const w = await world();
    const id = await draft(w);
    const res = await patch(w, id, {
      name: "Renamed",
      retry_config: { max_retries: 5 },
      max_concurrency: 3,
      rate_limit: 2,
      schedule_config: { timezone: "America/New_York", slots: [{ day_of_week: 4, start_time: "09:00", end_time: "17:30" }] },
      circuit_breaker: { enabled: true },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({
      id,
      name: "Renamed",
      state: "draft",
      retry_config: { enabled: true, max_retries: 5, retry_delay_seconds: 120, retry_on_busy: true },
      max_concurrency: 3,
      rate_limit: 2,
      schedule_config: { enabled: true, timezone: "America/New_York", slots: [{ day_of_week: 4, start_time: "09:00", end_time: "17:30" }] },
      circuit_breaker: { enabled: true, failure_threshold: 0.5, window_seconds: 120, min_calls_in_window: 5 },
    });
    // A partial change of a nested object keeps its other fields; null turns the schedule off.
    const second = await patch(w, id, { retry_config: { retry_on_voicemail: true }, schedule_config: { enabled: false } });
    expect(second.json.retry_config).toMatchObject({ max_retries: 5, retry_on_voicemail: true });
    expect(second.json.schedule_config).toMatchObject({ enabled: false, timezone: "America/New_York" });
    const third = await patch(w, id, { schedule_config: null });
    expect(third.json.schedule_config).toBeNull();
    // The listing (D1 summary) follows.
    const listed = (await call("GET", `${CAMPAIGNS}/`, { key: w.key })).json.items.find((c: { id: number }) => c.id === id);
    expect(listed).toMatchObject({ name: "Renamed", max_concurrency: 3, schedule_config: null, retry_config: { max_retries: 5 } });
  });

  it("refuses invalid values with their location, and a schedule without slots", async () => {
    const w = await world();
    const id = await draft(w);
    const cases: [unknown, (string | number)[]][] = [
      [{ name: "" }, ["body", "name"]],
      [{ retry_config: { max_retries: 11 } }, ["body", "retry_config", "max_retries"]],
      [{ max_concurrency: 0 }, ["body", "max_concurrency"]],
      [{ rate_limit: 0 }, ["body", "rate_limit"]],
      [{ schedule_config: { timezone: "Nowhere/Land" } }, ["body", "schedule_config", "timezone"]],
      [{ schedule_config: { enabled: true } }, ["body", "schedule_config", "slots"]],
      [{ schedule_config: { slots: [{ day_of_week: 7, start_time: "09:00", end_time: "10:00" }] } }, ["body", "schedule_config", "slots", 0, "day_of_week"]],
      [{ circuit_breaker: { window_seconds: 5 } }, ["body", "circuit_breaker", "window_seconds"]],
    ];
    for (const [body, loc] of cases) {
      const res = await patch(w, id, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.json.detail[0].loc, JSON.stringify(body)).toEqual(loc);
    }
    const after = await call("GET", `${CAMPAIGNS}/${id}`, { key: w.key });
    expect(after.json).toMatchObject({ name: "Spring outreach", max_concurrency: 10, schedule_config: null });
  });

  it("while running and paused (takes effect at once), refused once finished (409), 404 for another organization", async () => {
    // The engine dials through this seam: a carrier double that never answers keeps the test off the network.
    setCallStarter(() => new Promise(() => undefined));
    const w = await world("ari");
    const id = await draft(w);
    const start = await call("POST", `${CAMPAIGNS}/${id}/start`, { key: w.key });
    expect(start.status, start.text).toBe(200);
    expect(start.json.state).toBe("running");
    const running = await patch(w, id, { max_concurrency: 2 });
    expect(running.status, running.text).toBe(200);
    expect(running.json).toMatchObject({ state: "running", max_concurrency: 2 });

    expect((await call("POST", `${CAMPAIGNS}/${id}/pause`, { key: w.key })).status).toBe(200);
    const paused = await patch(w, id, { rate_limit: 5 });
    expect(paused.json).toMatchObject({ state: "paused", rate_limit: 5 });

    const other = await world();
    const foreign = await call("PATCH", `${CAMPAIGNS}/${id}`, { key: other.key, body: { name: "mine" } });
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual({ detail: "Campaign not found" });

    expect((await call("POST", `${CAMPAIGNS}/${id}/cancel`, { key: w.key })).status).toBe(200);
    const cancelled = await patch(w, id, { name: "late" });
    expect(cancelled.status).toBe(409);
    expect(cancelled.json).toEqual({ detail: "Cannot update a campaign in state 'cancelled'" });

    // failed (the source could not be read) and completed are finished too.
    const failedId = await draft(w);
    await stubOf(failedId).failSource("gone");
    expect((await patch(w, failedId, { name: "late" })).json).toEqual({ detail: "Cannot update a campaign in state 'failed'" });
    const completedId = await draft(w);
    await runInDurableObject(stubOf(completedId), async (_o, state) => {
      state.storage.sql.exec("UPDATE campaign SET state = 'completed'");
    });
    const completed = await patch(w, completedId, { max_concurrency: 4 });
    expect(completed.status).toBe(409);
    expect(completed.json).toEqual({ detail: "Cannot update a campaign in state 'completed'" });
    expect((await call("GET", `${CAMPAIGNS}/${completedId}`, { key: w.key })).json.max_concurrency).toBe(10);
  });
});
