// A run's bulk (transcript with timing, tool calls, analysis) lives in one details object in R2; D1 keeps the index.
// The run detail endpoint's JSON is the same byte for byte whether the bulk is in the old D1 columns (the code before
// the move read only those) or in the object; old rows move lazily on read and in the cron's batch; lists never read
// the objects; the session's storage is empty once its run is final; redaction applies before anything is stored.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { migrateRunDetails } from "../../src/calls/runs/run-details";
import { readDetails } from "../../src/calls/session/details-object";
import { readLatencyColumn } from "../../src/calls/session/latency-record";
import { callSessionStub } from "../../src/calls/session/stub";
import { call } from "../helpers";
import { conversationCall, runWhen, seatsConversation } from "./conversation-support";
import { runRow, type Setup, setup } from "./support";

const detailText = async (s: Setup, agentId: number, runId: number) => {
  const res = await call("GET", `/api/v1/workflow/${agentId}/runs/${runId}`, { key: s.org.key });
  expect(res.status, res.text).toBe(200);
  // The recording link is signed for 15 minutes from the request's second: the only field that may differ.
  return res.text.replace(/expires=\d+&signature=[0-9a-f]+/, "expires=E&signature=S");
};

/** The bytes a run's row keeps in D1: every column's stored length. */
async function rowBytes(runId: number): Promise<number> {
  const cols = (await env.DB.prepare("PRAGMA table_info(workflow_runs)").all<{ name: string }>()).results.map((c) => c.name);
  const sum = cols.map((c) => `coalesce(length("${c}"), 0)`).join(" + ");
  return (await env.DB.prepare(`SELECT ${sum} AS n FROM workflow_runs WHERE id = ?`).bind(runId).first<{ n: number }>())!.n;
}

/** Puts a run's bulk back into the old D1 columns, as rows from before the move have it, and drops its object. */
async function asOldRow(runId: number) {
  const row = await runRow(runId);
  const d = (await readDetails(env.UPLOADS, row.detailsKey!))!;
  await env.DB.prepare(
    "UPDATE workflow_runs SET transcript = ?, tool_calls = ?, analysis = ?, details_key = NULL, latency = NULL, analysis_status = NULL WHERE id = ?",
  )
    .bind(JSON.stringify(d.transcript), d.tool_calls && JSON.stringify(d.tool_calls), d.analysis && JSON.stringify(d.analysis), runId)
    .run();
  await env.UPLOADS.delete(row.detailsKey!);
  return d;
}

// What the other runs' features leave in a transcript and beside it: a barge-in (an interrupted reply with the words
// never heard), an HTTP tool and a transfer among the tool calls, an analysis, a transfer record.
const RICH = {
  transcript: [
    {
      role: "agent",
      text: "Hi Ada! We have a spring offer on seats.",
      start_ms: 0,
      end_ms: 1800,
      interrupted: true,
      timing: { cut_ms: 900, cut_words: "on seats." },
    },
    { role: "callee", text: "Can you look up my order?", start_ms: 1500, end_ms: 2900, interrupted: false },
    { role: "tool", text: "lookup_order: ok (200) in 132 ms", start_ms: 3400, end_ms: 3532, interrupted: false },
    {
      role: "agent",
      text: "Your order ships Friday. Let me put you through to a person.",
      start_ms: 3600,
      end_ms: 6100,
      interrupted: false,
      timing: {
        end_of_turn_ms: 410,
        stt_final_ms: 455,
        model_first_token_ms: 701,
        first_sentence_ms: 760,
        voice_first_byte_ms: 880,
        first_audio_sent_ms: 884,
        first_audio_heard_ms: 944,
      },
    },
  ],
  tool_calls: [
    { name: "lookup_order", arguments: { order_id: "A-1001" }, status: "ok", http_status: 200, duration_ms: 132, at_ms: 3400 },
    { name: "transfer_call", arguments: { reason: "wants a person" }, status: "ok", http_status: null, duration_ms: 12, at_ms: 6200 },
  ],
  analysis: {
    status: "completed",
    summary: "Ada asked about her order and was put through.",
    data: { seats: 12 },
    success: true,
    success_reason: "Her question was answered.",
    error: null,
    attempts: 1,
    analyzed_at: "2026-11-28T19:00:00.000Z",
  },
  transfer: {
    destination: "+14155550199",
    mode: "cold",
    requested_mode: "cold",
    requested_at: "2026-11-28T18:59:00.000Z",
    outcome: "connected",
    outcome_at: "2026-11-28T18:59:01.000Z",
    message: null,
  },
};

/** An old row: a finished call whose bulk is in the D1 columns (as every row written before the move). */
async function oldRow(s: Setup, agentId: number): Promise<number> {
  const res = await env.DB.prepare(
    `INSERT INTO workflow_runs (org_id, name, workflow_id, workflow_uuid, phone_number, status, end_reason, ended_at, transcript, tool_calls, analysis, transfer, gathered_context, disposition, usage)
     VALUES (?, ?, ?, ?, '+14155550123', 'completed', 'transferred', '2026-11-28T19:00:00.000Z', ?, ?, ?, ?, '{"seats":12}', 'interested', '{"stt_seconds":3.1,"tts_seconds":4.2,"input_tokens":900,"output_tokens":80}')
     RETURNING id`,
  )
    .bind(
      s.org.id,
      `WR-old-${crypto.randomUUID()}`,
      agentId,
      s.agent.workflow_uuid,
      ...[RICH.transcript, RICH.tool_calls, RICH.analysis, RICH.transfer].map((v) => JSON.stringify(v)),
    )
    .first<{ id: number }>();
  return res!.id;
}

describe("a run's details object", () => {
  it("a conversation's bulk is one object; the detail JSON is byte-identical to the old columns'; lists omit it; the session's storage empties once the run is final", async () => {
    const s = await setup("twilio");
    const { runId, callee, agentId } = await conversationCall(s);
    await seatsConversation(callee);
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length);
    expect(run.transcript.length).toBe(5);

    const row = await runRow(runId);
    expect(row.detailsKey).toBe(`runs/${s.org.id}/${runId}.json`);
    expect([row.transcript, row.toolCalls, row.analysis]).toEqual([null, null, null]);
    expect(readLatencyColumn(row.latency!).replies).toBe(run.transcript.filter((t: any) => t.role === "agent" && t.timing).length);
    expect(row.gatheredContext).toEqual({ seats: 12 });
    const bytes = await rowBytes(runId);

    const after = await detailText(s, agentId, runId);
    // Who answered, as the API shows it from the object: a person (GET the run's `amd`).
    expect(JSON.parse(after).amd).toMatchObject({ class: "human", evidence: { tones: [] } });
    expect(JSON.parse(after).amd.decided_ms).toBeGreaterThan(0);
    // The old columns never held it: a run read from them (or moved from them) has none.
    const withoutAmd = JSON.stringify({ ...JSON.parse(after), amd: null });
    const d = await asOldRow(runId);
    const oldBytes = await rowBytes(runId);
    console.log(`D1 bytes of this call's row: ${bytes} with the details object, ${oldBytes} with the bulk in D1`);
    expect(bytes).toBeLessThan(1024);
    expect(oldBytes).toBeGreaterThan(bytes);
    // Read as the code before the move read it (the old columns), then moved on that read, then from the object.
    expect(await detailText(s, agentId, runId)).toBe(withoutAmd);
    const moved = await runRow(runId);
    expect(moved.detailsKey).toBeTruthy();
    expect([moved.transcript, moved.toolCalls, moved.analysis]).toEqual([null, null, null]);
    // The old columns never held the nodes the call went through (agent tests' nodes_reached) nor who answered (the
    // answering-machine detection's verdict: a person here): the moved object has neither.
    expect(d.nodes).toEqual(["start", "pitch", "bye"]);
    expect(d.amd).toMatchObject({ cls: "human" });
    expect(await readDetails(env.UPLOADS, moved.detailsKey!)).toEqual({ ...d, nodes: undefined, amd: undefined });
    expect(await detailText(s, agentId, runId)).toBe(withoutAmd);

    // The list shows the run without the bulk (no object read), everything else as the detail.
    const list = (await call("GET", `/api/v1/workflow/${agentId}/runs`, { key: s.org.key })).json;
    const item = list.items.find((i: any) => i.id === runId);
    const { transcript: _t, tool_calls: _c, analysis: _a, amd: _m, recording_url: _r, ...rest } = JSON.parse(after);
    expect(item).toMatchObject(rest);
    expect(Object.keys(item)).not.toContain("transcript");

    // The session's storage: gone once the run is final (the carrier's final status here written as it would land).
    await env.DB.prepare("UPDATE workflow_runs SET status = 'completed' WHERE id = ? AND status NOT IN ('completed','voicemail')").bind(runId).run();
    const stub = callSessionStub(env, runId);
    await runDurableObjectAlarm(stub);
    await runInDurableObject(stub, async (_o, state) => {
      expect(await state.storage.getAlarm()).toBeNull();
      expect((await state.storage.list()).size).toBe(0);
      const tables = state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'").toArray();
      expect(tables).toEqual([]);
    });
    // A late snapshot (a carrier's status asking) finds an ended call, not an error or a new one.
    expect(await stub.snapshot()).toMatchObject({ ended: true, turns: [] });
    expect(await stub.mediaState()).toBe("ended");
    // The detail is unchanged by the session's going.
    expect(await detailText(s, agentId, runId)).toBe(withoutAmd);
  }, 120_000);

  it("an old row with a barge-in, tools, a transfer and an analysis: the same JSON before and after the move (on read, and by the cron's batch)", async () => {
    const s = await setup("twilio");
    const agentId = s.agent.id as number;
    const lazy = await oldRow(s, agentId);
    const before = await detailText(s, agentId, lazy);
    const parsed = JSON.parse(before);
    expect(parsed.transcript[0]).toMatchObject({ interrupted: true, timing: { cut_ms: 900 } });
    expect(parsed.tool_calls.map((t: any) => t.name)).toEqual(["lookup_order", "transfer_call"]);
    expect(parsed.analysis.summary).toBe(RICH.analysis.summary);
    expect(parsed.transfer.outcome).toBe("connected");
    const row = await runRow(lazy);
    expect(row.detailsKey).toBe(`runs/${s.org.id}/${lazy}.json`);
    expect([row.transcript, row.toolCalls, row.analysis]).toEqual([null, null, null]);
    expect(row.analysisStatus).toBe("completed");
    console.log(`D1 bytes of the old row with a barge-in, tools, a transfer and an analysis: ${await rowBytes(lazy)} once moved`);
    expect(await rowBytes(lazy)).toBeLessThan(1024);
    expect(await detailText(s, agentId, lazy)).toBe(before);

    // The cron's batch moves rows nobody reads.
    const batch = await oldRow(s, agentId);
    let moved = 0;
    for (let i = 0; i < 20 && !(await runRow(batch)).detailsKey; i++) moved += await migrateRunDetails(env);
    expect(moved).toBeGreaterThan(0);
    const b = await runRow(batch);
    expect([b.transcript, b.toolCalls, b.analysis]).toEqual([null, null, null]);
    expect(await readDetails(env.UPLOADS, b.detailsKey!)).toEqual({ transcript: RICH.transcript, tool_calls: RICH.tool_calls, analysis: RICH.analysis });
    // The same JSON as the lazily moved twin, but for the row's own identity.
    const strip = (t: string) => t.replace(/"(id|name|created_at)":("[^"]*"|\d+)/g, "");
    expect(strip(await detailText(s, agentId, batch))).toBe(strip(before));

    // The latency endpoint reads the rows' small latency column: the reply with a timing is counted once each.
    const latency = (await call("GET", `/api/v1/workflow/${agentId}/latency`, { key: s.org.key })).json;
    expect(latency).toMatchObject({ calls: 2, replies: 4, figures: { first_audio_heard_ms: { count: 2 }, cut_ms: { count: 2 } } });
    // Moved, the rows' column keeps each figure within 2 % (and 1 ms) of its value (docs/turn-timing.md).
    expect(Math.abs(latency.figures.first_audio_heard_ms.p50 - 944)).toBeLessThanOrEqual(0.02 * 944 + 1);
    expect(Math.abs(latency.figures.cut_ms.p50 - 900)).toBeLessThanOrEqual(0.02 * 900 + 1);
  }, 60_000);

  it("with the organization's redact_pii on, the stored transcript, gathered values and tool arguments are redacted", async () => {
    const s = await setup("twilio");
    await env.DB.prepare("INSERT INTO calling_policies (org_id, redact_pii) VALUES (?, 1) ON CONFLICT (org_id) DO UPDATE SET redact_pii = 1")
      .bind(s.org.id)
      .run();
    const { runId, callee, agentId } = await conversationCall(s);
    // The seats variable marked sensitive in the run's definition: its value leaves the transcript and the gathered values.
    const row = await runRow(runId);
    const def = await env.DB.prepare("SELECT definition FROM workflow_definitions WHERE id = ?").bind(row.definitionId).first<{ definition: string }>();
    const definition = JSON.parse(def!.definition);
    for (const n of definition.nodes) for (const v of n.data?.extraction_variables ?? []) if (v.name === "seats") v.sensitive = true;
    await env.DB.prepare("UPDATE workflow_definitions SET definition = ? WHERE id = ?").bind(JSON.stringify(definition), row.definitionId).run();
    await seatsConversation(callee);
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length);
    expect(run.gathered_context).toEqual({ seats: "[redacted]" });
    expect(run.transcript.map((t: any) => t.text)).toContain("Sure, tell me more.");
  }, 120_000);
});
