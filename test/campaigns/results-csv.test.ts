// GET /campaign/{id}/results.csv: one row per contact with its columns, attempts, outcome, disposition, the agent's
// gathered values and its run ids; pages of contacts streamed in row order; cells a spreadsheet would run defused.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import Papa from "papaparse";
import { describe, expect, it } from "vitest";
import { CALL_COLUMNS, EXPORT_PAGE, safeCell } from "../../src/campaigns/results-csv";
import { CSV_RECORDING_URL_TTL_SECONDS } from "../../src/campaigns/results-calls";
import { recordingUrlValid } from "../../src/calls/runs/recordings";
import { estimateCost } from "../../public/dashboard/cost.js";
import seats from "../fixtures/seats-agent.json";
import { call } from "../helpers";
import { resetWorld, tick } from "./engine-harness";
import { seedCampaign, setupOrg } from "./support";

const USAGE = { stt_seconds: 20, tts_seconds: 18, input_tokens: 3000, output_tokens: 200 };
const parse = (text: string) => Papa.parse<string[]>(text.trimEnd(), { header: false }).data;

describe("campaign results as CSV", () => {
  it("a cell a spreadsheet would run as a formula is defused; numbers and phone numbers stay as they are", () => {
    expect(["=1+2", "+cmd|' /C calc'!A0", "-2+3+cmd", "@SUM(A1)", "\t=x", "plain", "+44 20 7946 0958", "-3.5", 12, true, null].map(safeCell)).toEqual([
      "'=1+2",
      "'+cmd|' /C calc'!A0",
      "'-2+3+cmd",
      "'@SUM(A1)",
      "'\t=x",
      "plain",
      "+44 20 7946 0958",
      "-3.5",
      "12",
      "true",
      "",
    ]);
  });

  it("one row per contact: columns, status, attempts, outcome, disposition, gathered values and run ids", async () => {
    const carrier = resetWorld();
    const o = await setupOrg();
    // The agent extracts `seats`: a column of its own.
    expect((await call("PUT", `/api/v1/workflow/${o.workflowId}`, { key: o.org.key, body: { workflow_definition: seats.definition } })).status).toBe(200);
    const { id, stub } = await seedCampaign(o, { n: 3 });
    await stub.start();
    await tick(stub);
    const [first, second] = carrier.open(id);
    // The first contact's call is a real run in D1 with what the agent gathered (one value written to defuse).
    const run = await env.DB.prepare(
      `INSERT INTO workflow_runs (org_id, name, workflow_id, workflow_uuid, phone_number, status, gathered_context, disposition,
         duration_seconds, end_reason, conversation, media, transfer, usage, provider, recording_key, analysis, answered_by)
       VALUES (?, ?, ?, 'u', ?, 'completed', ?, 'interested', 42, 'agent_hangup', 1, ?, ?, ?, 'twilio', 'recordings/x.ulaw', ?, 'human') RETURNING id`,
    )
      .bind(
        o.org.id,
        `WR-X${first.runId}-${id}`,
        o.workflowId,
        first.req.phoneNumber,
        JSON.stringify({ seats: 12, note: "=HYPERLINK(x)" }),
        JSON.stringify({ caller_audio_s: 41.9, agent_audio_s: 18.2, gaps: 0, underruns: 0 }),
        JSON.stringify({ destination: "+14155550100", outcome: "connected" }),
        JSON.stringify(USAGE),
        JSON.stringify({ summary: "=Wants twelve seats", status: "ok" }),
      )
      .first<{ id: number }>();
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec("UPDATE attempts SET run_id = ? WHERE contact_id = ?", run!.id, first.req.contactId);
    });
    await carrier.report({ ...first, runId: run!.id }, "completed");
    await stub.onRunOutcome({ runId: run!.id, contactId: first.req.contactId, attempt: 1, disposition: "interested" });
    await carrier.report(second, "busy");

    const res = await call("GET", `/api/v1/campaign/${id}/results.csv`, { key: o.org.key });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("Content-Disposition")).toBe(`attachment; filename="campaign-${id}-results.csv"`);
    const rows = parse(res.text);
    // The newest call's columns come after run_ids, so a parser of the older file reads it as before.
    expect(rows[0]).toEqual(["row", "phone_number", "i", "status", "attempts", "outcome", "disposition", "gathered.seats", "run_ids", ...CALL_COLUMNS]);
    const cost = estimateCost({ usage: USAGE, duration_seconds: 42, provider: "twilio", direction: "outbound" })!.total.toFixed(4);
    const none = CALL_COLUMNS.map(() => "");
    expect([...rows[1].slice(0, -3), ...rows[1].slice(-2)]).toEqual([
      ...["2", first.req.phoneNumber, "0", "done", "1", "completed", "interested", "12", String(run!.id)],
      ...["42", "agent_hangup", "true", "41.9", "18.2", "connected", "'=Wants twelve seats", cost, "human", ""],
    ]);
    // A signed link to the recording, valid for the documented week.
    const link = new URL(rows[1].at(-3)!);
    expect(link.pathname).toBe(`/api/v1/recordings/${run!.id}`);
    expect(Number(link.searchParams.get("expires")) - Date.now() / 1000).toBeGreaterThan(CSV_RECORDING_URL_TTL_SECONDS - 600);
    const [expires, signature] = [Number(link.searchParams.get("expires")), link.searchParams.get("signature")!];
    expect(await recordingUrlValid(env.CALLBACK_SECRET, run!.id, expires, signature, Date.now() + 6 * 24 * 3600_000)).toBe(true);
    // The third contact's call, still open (the first was reported under its D1 run's id, not the carrier's).
    const third = carrier.open(id).find((s) => s.req.contactId !== first.req.contactId)!;
    expect(rows.slice(2)).toEqual([
      ["3", second.req.phoneNumber, "1", "retry_waiting", "1", "busy", "", "", String(second.runId), ...none],
      ["4", third.req.phoneNumber, "2", "in_progress", "1", "", "", "", String(third.runId), ...none],
    ]);
    expect(res.text.endsWith("\r\n")).toBe(true);

    const other = await setupOrg();
    expect((await call("GET", `/api/v1/campaign/${id}/results.csv`, { key: other.org.key })).status).toBe(404);
  });

  it("machine answers: progress gives the campaign's machine rate, results.csv who answered each contact's newest call", async () => {
    const carrier = resetWorld();
    const o = await setupOrg();
    const { id, stub } = await seedCampaign(o, { n: 3 });
    await stub.updateSettings({ retry_config: { enabled: false } });
    await stub.start();
    await tick(stub);
    const [person, machine, busy] = carrier.open(id);
    // The machine's call as the session leaves it: voicemail, the agent's own verdict in answered_by and amd_class.
    const run = await env.DB.prepare(
      `INSERT INTO workflow_runs (org_id, name, workflow_id, workflow_uuid, phone_number, status, answered_by, amd_class)
       VALUES (?, ?, ?, 'u', ?, 'voicemail', 'machine_detected', 'machine_greeting') RETURNING id`,
    )
      .bind(o.org.id, `WR-M${machine.runId}-${id}`, o.workflowId, machine.req.phoneNumber)
      .first<{ id: number }>();
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec("UPDATE attempts SET run_id = ? WHERE contact_id = ?", run!.id, machine.req.contactId);
    });
    await carrier.report(person, "completed");
    await carrier.report({ ...machine, runId: run!.id }, "voicemail");
    await carrier.report(busy, "busy");
    // The session tells the campaign its class with the disposition (none chosen on a machine).
    await stub.onRunOutcome({ runId: run!.id, contactId: machine.req.contactId, attempt: 1, disposition: null, amdClass: "machine_greeting" });

    const p = (await call("GET", `/api/v1/campaign/${id}/progress`, { key: o.org.key })).json;
    // Two answered (the busy line was not), one of them by a machine; the agent judged that one.
    expect(p.answering_machines).toEqual({ answered: 2, machines: 1, rate: 0.5, amd_classes: { machine_greeting: 1 } });
    const rows = parse((await call("GET", `/api/v1/campaign/${id}/results.csv`, { key: o.org.key })).text);
    const col = (name: string) => rows[0].indexOf(name);
    const byPhone = new Map(rows.slice(1).map((r) => [r[col("phone_number")], r]));
    expect(byPhone.get(machine.req.phoneNumber)![col("outcome")]).toBe("voicemail");
    expect(byPhone.get(machine.req.phoneNumber)![col("answered_by")]).toBe("machine_detected");
    expect(byPhone.get(machine.req.phoneNumber)![col("amd_class")]).toBe("machine_greeting");
    expect(rows[0].at(-1)).toBe("amd_class");
    expect(byPhone.get(busy.req.phoneNumber)![col("answered_by")]).toBe("");
  });

  it("a campaign larger than a page comes out whole, in row order, page after page", async () => {
    resetWorld();
    const o = await setupOrg();
    const n = EXPORT_PAGE * 2 + 7;
    const { id } = await seedCampaign(o, { n });
    const res = await call("GET", `/api/v1/campaign/${id}/results.csv`, { key: o.org.key });
    const rows = parse(res.text);
    expect(rows).toHaveLength(n + 1);
    expect(rows.slice(1).map((r) => Number(r[0]))).toEqual(Array.from({ length: n }, (_, i) => i + 2));
    expect(new Set(rows.slice(1).map((r) => r[3]))).toEqual(new Set(["pending"]));
  });
});
