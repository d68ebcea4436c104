// bench/scale: N answered calls through the production path on the carrier simulator (the public API's start, the
// carrier's answer and statuses, the media socket into the call session, the conversation agent on Workers AI faked at
// the binding, the recording and details stored, the after-call analysis from the queue, the final status) and what
// each cost at Cloudflare's metered boundaries (bench/scale/meters.ts). Prints one SCALE_RESULT line for run.mjs,
// which turns it into the table of docs/scale.md. A call that does not complete as expected fails the run: nothing
// is reported from a broken setup.
import { env, exports } from "cloudflare:workers";
import { expect, inject, it } from "vitest";
import { FakeWorkersAi } from "../../test/calls/fake-workers-ai";
import { runWhen, SEATS_DISPOSITIONS, seatsConversation, startSeatsCall } from "../../test/calls/conversation-support";
import { connect } from "../../test/calls/media-support";
import { callSessionStub } from "../../src/calls/session/stub";
import { deliverAll, flush, play, runRow, setup } from "../../test/calls/support";
import { installMeters, type Meters, readMeters } from "./meters";

const CALLS = (inject as (k: string) => number)("benchCalls");
const PARALLEL = (inject as (k: string) => number)("benchParallel");
const ANALYSIS = { summary_prompt: "One sentence.", data_schema: { type: "object", properties: { seats: { type: "integer" } }, required: ["seats"] } };

const sub = (a: Meters, b: Meters) => ({
  d1: {
    statements: a.d1.statements - b.d1.statements,
    writeStatements: a.d1.writeStatements - b.d1.writeStatements,
    rowsWritten: a.d1.rowsWritten - b.d1.rowsWritten,
    rowsRead: a.d1.rowsRead - b.d1.rowsRead,
    bytesAdded: a.d1.sizeAfter - b.d1.sizeAfter,
  },
  r2: { classA: a.r2.classA - b.r2.classA, classB: a.r2.classB - b.r2.classB, ops: diff(a.r2.ops, b.r2.ops) },
  queueMessages: a.queue.messages - b.queue.messages,
  durableObjects: diff(a.durableObjects, b.durableObjects),
  alarms: diff(a.alarms, b.alarms),
  fetches: diff(a.fetches, b.fetches),
});
const diff = (a: Record<string, number>, b: Record<string, number>) => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]));

async function bucketBytes(prefixes: string[]): Promise<Record<string, number>> {
  const total: Record<string, number> = {};
  for (const prefix of prefixes) {
    total[prefix] = 0;
    let cursor: string | undefined;
    do {
      const page = await env.UPLOADS.list({ prefix, cursor });
      for (const o of page.objects) total[prefix] += o.size;
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
  }
  return total;
}

it(`${CALLS} answered calls: what each costs in D1, R2, Queues, Durable Objects, subrequests and engine requests`, async () => {
  const ai = new FakeWorkersAi();
  // Workers AI faked at the binding for the whole isolate: the call sessions' engines and the queue's analysis.
  const aiProto = Object.getPrototypeOf(env.AI) as { run: unknown };
  aiProto.run = (model: string, inputs: Record<string, unknown>, options?: Record<string, unknown>) => ai.run(model, inputs, options);

  const s = await setup("twilio");
  const wf = { call_disposition_codes: SEATS_DISPOSITIONS, workflow_configurations: { analysis: ANALYSIS } };
  // One call first, unmeasured: the agent, the isolate's caches and the schema are warm, as in a running deployment.
  const first = await startSeatsCall(s, wf);
  const uuid = (await runRow(first.runId)).workflowUuid;
  await oneCall(first.runId);
  const startCall = async () => {
    const res = await exports.default.fetch(
      new Request(`http://edgedial.test/api/v1/public/agent/${uuid}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-API-Key": s.org.key },
        body: JSON.stringify({ phone_number: "+14155550123", initial_context: { first_name: "Ada" } }),
      }),
    );
    const json = (await res.json()) as { workflow_run_id: number };
    expect(res.status, JSON.stringify(json)).toBe(200);
    return json.workflow_run_id;
  };

  const tablesBefore = await tableSizes();
  installMeters();
  // The database's size is read from each statement's meta: one statement now gives the size before the calls.
  await env.DB.prepare("SELECT 1").run();
  const details = `runs/${s.org.id}/`;
  const recordings = `recordings/${s.org.id}/`;
  const r2Before = await bucketBytes([details, recordings]);
  const before = readMeters();
  const probed = { ...probe };
  frames.length = 0;
  const asked = ai.asked.length;
  const runIds: number[] = [];
  for (let i = 0; i < CALLS; i += PARALLEL) {
    const batch = Array.from({ length: Math.min(PARALLEL, CALLS - i) }, async () => {
      const runId = await startCall();
      probe.workerRequests++;
      runIds.push(runId);
      await oneCall(runId);
    });
    await Promise.all(batch);
  }
  const after = readMeters();
  const r2After = await bucketBytes([details, recordings]);
  const callerFrames = frames.splice(0).reduce((a, b) => a + b, 0);
  // Each run's row: the bytes of its values as stored (text and blobs by length, numbers by their digits).
  const tablesAfter = await tableSizes();
  const d1Tables = Object.fromEntries(
    Object.entries(tablesAfter).map(([t, v]) => [t, { rows: v.rows - (tablesBefore[t]?.rows ?? 0), bytes: v.bytes - (tablesBefore[t]?.bytes ?? 0) }]),
  );
  const columns = (await env.DB.prepare("SELECT name FROM pragma_table_info('workflow_runs')").all<{ name: string }>()).results.map((c) => c.name);
  const perColumn = await env.DB.prepare(
    `SELECT ${columns.map((c) => `avg(coalesce(length(CAST(${c} AS BLOB)), 0)) AS "${c}"`).join(", ")} FROM workflow_runs WHERE id IN (${runIds.join(",")})`,
  ).first<Record<string, number>>();
  const turns = await Promise.all(runIds.map(async (id) => (await runWhen(s, first.agentId, id, (r) => !!r.transcript?.length, 200)).transcript.length));
  const models: Record<string, number> = {};
  for (const a of ai.asked.slice(asked)) models[a.model] = (models[a.model] ?? 0) + 1;
  const result = {
    calls: CALLS,
    turns_per_call: turns.reduce((a, b) => a + b, 0) / CALLS,
    ...sub(after, before),
    r2BytesAdded: { details: r2After[details] - r2Before[details], recordings: r2After[recordings] - r2Before[recordings] },
    benchStatements: probe.statements - probed.statements,
    benchSessionRpcs: probe.sessions - probed.sessions,
    workerRequests: probe.workerRequests - probed.workerRequests,
    carrierFramesIn: callerFrames,
    d1RunRowBytes: Object.fromEntries(Object.entries(perColumn ?? {}).filter(([, v]) => v > 0)),
    engineRequests: models,
    d1Tables,
  };
  expect(result.d1.rowsWritten).toBeGreaterThan(0);
  expect(result.r2BytesAdded.recordings).toBeGreaterThan(0);
  expect(result.r2BytesAdded.details).toBeGreaterThan(0);
  console.log(`SCALE_RESULT ${JSON.stringify(result)}`);
}, 600_000);

/** Every D1 table's rows and the bytes of their values (read outside the measured window). */
async function tableSizes(): Promise<Record<string, { rows: number; bytes: number }>> {
  const tables = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'").all<{
    name: string;
  }>();
  const out: Record<string, { rows: number; bytes: number }> = {};
  for (const { name } of tables.results) {
    const cols = await env.DB.prepare(`SELECT name FROM pragma_table_info('${name}')`).all<{ name: string }>();
    const sum = cols.results.map((c) => `coalesce(length(CAST("${c.name}" AS BLOB)), 0)`).join(" + ");
    const r = await env.DB.prepare(`SELECT count(*) AS rows, coalesce(sum(${sum}), 0) AS bytes FROM "${name}"`).first<{ rows: number; bytes: number }>();
    out[name] = r ?? { rows: 0, bytes: 0 };
  }
  return out;
}

/** One answered call, start to analysis: the carrier answers, the callee converses, the carrier's final status arrives. */
async function oneCall(runId: number) {
  const row = await runRow(runId);
  // The carrier's answer and statuses up to in-progress now; its final status once the conversation is over.
  const cbs = await play(row.providerCallId!, "answered");
  const final = [...cbs].reverse().find((cb) => cb.kind !== "stream" && cb.kind !== "answer");
  // Worker requests: the API's start (counted by the caller), each carrier callback delivered, the media upgrade.
  probe.workerRequests += (await deliverAll(cbs.filter((cb) => cb !== final))).length + 1;
  // The deployed agent (the test pool leaves VOICE_AGENT empty): one RPC of the bench's own, subtracted in run.mjs.
  await callSessionStub(env, runId).prepare({ agent: "conversation" });
  const callee = await connect("twilio", runId);
  await seatsConversation(callee);
  frames.push(Math.round(callee.clockMs / 20));
  if (final) probe.workerRequests += (await deliverAll([final])).length;
  for (let more = await flush(row.providerCallId!); more.length; more = await flush(row.providerCallId!))
    probe.workerRequests += (await deliverAll(more)).length;
  // Settled: final, and the after-call analysis ran. Asked of D1 directly (one statement reading one row each time,
  // which run.mjs subtracts), not through the API, whose reads would count as the call's.
  for (let i = 0; ; i++) {
    probe.statements++;
    const r = await env.DB.prepare("SELECT status, analysis_status FROM workflow_runs WHERE id = ?")
      .bind(runId)
      .first<{ status: string; analysis_status: string | null }>();
    if (r && r.status !== "in_progress" && r.analysis_status) break;
    if (i > 1500) throw new Error(`run ${runId} never settled: ${JSON.stringify(r)}`);
    await new Promise((res) => setTimeout(res, 20));
  }
  probe.sessions++;
}

/** The carrier's media messages into each call's session (one per 20 ms of the callee's audio). */
const frames: number[] = [];

/** What the bench itself asked of D1 and of the call sessions while measuring (subtracted by run.mjs). */
const probe = { statements: 0, sessions: 0, workerRequests: 0 };
