// The after-call work waits for engine capacity (issue 38): an analysis on Workers AI takes a token from the engine
// capacity object first. With the budget held by live calls nothing of the message runs (no model request, no
// analysis, no webhook node) and the message goes back on the queue with the capacity object's delay; once the calls
// free the budget it runs, once, and a duplicate runs nothing again. A scripted model takes no token; a message that
// waited past MAX_CAPACITY_WAIT_SECONDS runs anyway. Driven through the Worker's own queue handler.
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_CAPACITY_WAIT_SECONDS } from "../../src/calls/after-call/post-call";
import { detailsKeyOf, readDetails, writeDetails } from "../../src/calls/session/details-object";
import { setEnginesLive } from "../../src/capacity/admission";
import { capacityStub } from "../../src/capacity/engine-capacity-object";
import worker from "../../src/index";
import { call, createOrg } from "../helpers";
import { createEndpoint } from "../webhooks/support";
import { DEFINITION } from "./conversation-support";

// The default agent's model: the analysis asks it.
const LLM = "workers-ai:text-generation:@cf/meta/llama-3.3-70b-instruct-fp8-fast";
const ANALYSIS = { summary_prompt: "One sentence.", data_schema: { type: "object", properties: { seats: { type: "integer" } }, required: ["seats"] } };
const GOOD = { summary: "Ada wants 12 seats.", data: { seats: 12 }, success: null, success_reason: null };
const TRANSCRIPT = [
  { role: "agent", text: "Hi Ada! How many seats do you need?", start_ms: 0, end_ms: 1800, interrupted: false },
  { role: "callee", text: "We need twelve seats.", start_ms: 2000, end_ms: 3400, interrupted: false },
];

/** Workers AI at the binding: every chat request answers the analysis, streamed as the binding streams. */
function fakeAi() {
  const asked: string[] = [];
  return {
    asked,
    run: async (model: string) => {
      asked.push(model);
      return new Response(`data: ${JSON.stringify({ response: JSON.stringify(GOOD) })}\n\ndata: [DONE]\n\n`).body;
    },
  };
}

/** The queue as the handler sees it: what was sent, with its delay. */
function fakeQueue() {
  const sent: { body: any; delaySeconds?: number }[] = [];
  return {
    sent,
    send: async (body: unknown, o?: { delaySeconds?: number }) => void sent.push({ body, delaySeconds: o?.delaySeconds }),
    sendBatch: async (msgs: { body: unknown; delaySeconds?: number }[]) => void sent.push(...msgs.map((m) => ({ body: m.body, delaySeconds: m.delaySeconds }))),
  };
}

/** One after-call message through the Worker's queue handler: how it was settled. */
async function deliver(e: Env, body: unknown) {
  const settled: { acked: number; retried: Array<{ delaySeconds?: number } | undefined> } = { acked: 0, retried: [] };
  const message = {
    id: crypto.randomUUID(),
    timestamp: new Date(),
    body,
    attempts: 1,
    ack: () => void settled.acked++,
    retry: (o?: { delaySeconds?: number }) => void settled.retried.push(o),
  };
  const batch = { queue: "edgedial-webhooks", messages: [message], ackAll: () => {}, retryAll: () => {} };
  await worker.queue(batch as unknown as MessageBatch, e);
  return settled;
}

/** An agent with an analysis and a webhook node, and one finished run of it whose bulk is in its details object. */
async function finishedRun(voiceAgent?: Record<string, unknown>) {
  const org = await createOrg();
  const ep = await createEndpoint(org, { url: "https://hooks.example.com/events", events: ["run.analyzed"] });
  const definition = {
    ...DEFINITION,
    nodes: [...DEFINITION.nodes, { id: "crm", type: "webhook", data: { url: "https://hooks.example.com/crm", webhook_endpoint_id: ep.id } }],
  };
  const wf = await call("POST", "/api/v1/workflow/create", {
    key: org.key,
    body: {
      name: "seats",
      workflow_definition: definition,
      workflow_configurations: { analysis: ANALYSIS, ...(voiceAgent ? { voice_agent: voiceAgent } : {}) },
    },
  });
  expect(wf.status, wf.text).toBe(200);
  const def = await env.DB.prepare("SELECT id FROM workflow_definitions WHERE workflow_id = ? ORDER BY id DESC").bind(wf.json.id).first<{ id: number }>();
  const run = await env.DB.prepare(
    `INSERT INTO workflow_runs (org_id, name, workflow_id, workflow_uuid, definition_id, phone_number, status, end_reason, ended_at)
     VALUES (?, ?, ?, ?, ?, '+14155550123', 'completed', 'completed', '2026-11-28T19:00:00.000Z') RETURNING id`,
  )
    .bind(org.id, `WR-cap-${crypto.randomUUID()}`, wf.json.id, wf.json.workflow_uuid, def!.id)
    .first<{ id: number }>();
  const key = detailsKeyOf(org.id, run!.id);
  await writeDetails(env.UPLOADS, key, { transcript: TRANSCRIPT, tool_calls: null, analysis: null });
  await env.DB.prepare("UPDATE workflow_runs SET details_key = ? WHERE id = ?").bind(key, run!.id).run();
  return { runId: run!.id, key, orgId: org.id };
}

/** What the after-call work left: the analysis' status and body, and the webhook deliveries queued per event. */
async function leftBehind({ runId, key, orgId }: { runId: number; key: string; orgId: number }) {
  const row = await env.DB.prepare("SELECT analysis_status AS status FROM workflow_runs WHERE id = ?").bind(runId).first<{ status: string | null }>();
  // The organization's (its events carry no run id): it has this one run.
  const deliveries = await env.DB.prepare("SELECT event, node_id FROM webhook_deliveries WHERE org_id = ? ORDER BY id").bind(orgId).all();
  return { status: row!.status, analysis: (await readDetails(env.UPLOADS, key))?.analysis ?? null, deliveries: deliveries.results };
}

// Two calls' leases hold the model's whole budget: nothing is left spare for analysis.
const HELD = ["cap:a", "cap:b"];
async function holdTheBudget() {
  const stub = capacityStub(env);
  expect(await stub.setLimits({ engines: { [LLM]: { rpm: 24 } }, call_share: 1 })).toEqual({ ok: true });
  const demand = { [LLM]: { rpm: 12, streams: 0 } };
  const granted = await stub.acquireMany(HELD.map((leaseId) => ({ leaseId, orgId: 1, ttlSeconds: 600, demand })));
  expect(granted.every((g) => g.granted)).toBe(true);
  expect(await stub.takeToken(LLM)).toMatchObject({ ok: false });
}

beforeAll(() => setEnginesLive(true));
afterAll(async () => {
  setEnginesLive(null);
  await capacityStub(env).releaseMany(HELD);
  await capacityStub(env).setLimits(null);
});

describe("after-call work and engine capacity", () => {
  it("waits in the queue while calls hold the budget, then runs once; a duplicate runs nothing again", async () => {
    const r = await finishedRun();
    const { runId } = r;
    await holdTheBudget();
    const ai = fakeAi();
    const queue = fakeQueue();
    const e = { ...env, AI: ai, WEBHOOKS: queue } as unknown as Env;

    // Refused: no model request, no analysis, no node; the message is back on the queue with the object's delay.
    const first = await deliver(e, { afterCall: { runId } });
    expect(ai.asked).toEqual([]);
    expect(await leftBehind(r)).toEqual({ status: null, analysis: null, deliveries: [] });
    expect(first).toEqual({ acked: 1, retried: [] });
    expect(queue.sent).toEqual([{ body: { afterCall: { runId, waited: 30 } }, delaySeconds: 30 }]);

    // Still busy: it waits again, the wait adding up.
    await deliver(e, queue.sent[0].body);
    expect(queue.sent[1]).toEqual({ body: { afterCall: { runId, waited: 60 } }, delaySeconds: 30 });
    expect(ai.asked).toEqual([]);

    // The calls end: the message that comes back runs, once.
    await capacityStub(env).releaseMany(HELD);
    const sentBefore = queue.sent.length;
    expect(await deliver(e, queue.sent[1].body)).toEqual({ acked: 1, retried: [] });
    expect(ai.asked).toEqual(["@cf/meta/llama-3.3-70b-instruct-fp8-fast"]);
    const done = await leftBehind(r);
    expect(done.status).toBe("completed");
    expect(done.analysis).toMatchObject({ status: "completed", summary: GOOD.summary, data: GOOD.data });
    expect(done.deliveries).toEqual([
      { event: "run.analyzed", node_id: null },
      { event: "agent.webhook_node", node_id: "crm" },
    ]);
    // The deliveries went to the queue; no copy of the after-call message did.
    expect(queue.sent.slice(sentBefore).every((s) => !(s.body as { afterCall?: unknown }).afterCall)).toBe(true);

    // The message again (a duplicate, or the first copy after all): nothing runs twice.
    expect(await deliver(e, { afterCall: { runId } })).toEqual({ acked: 1, retried: [] });
    expect(ai.asked).toHaveLength(1);
    expect((await leftBehind(r)).deliveries).toHaveLength(2);
  }, 60_000);

  it("a scripted model takes no token, and a message that waited its limit runs anyway", async () => {
    await holdTheBudget();
    const scripted = await finishedRun({ llm: { provider: "scripted", script: [{ prompt: "post-call analysis", say: JSON.stringify(GOOD) }] } });
    const ai = fakeAi();
    const e = { ...env, AI: ai, WEBHOOKS: fakeQueue() } as unknown as Env;
    expect(await deliver(e, { afterCall: { runId: scripted.runId } })).toEqual({ acked: 1, retried: [] });
    expect((await leftBehind(scripted)).status).toBe("completed");
    expect(ai.asked).toEqual([]);

    const late = await finishedRun();
    const queue = fakeQueue();
    const lateEnv = { ...env, AI: ai, WEBHOOKS: queue } as unknown as Env;
    await deliver(lateEnv, { afterCall: { runId: late.runId, waited: MAX_CAPACITY_WAIT_SECONDS - 30 } });
    expect(queue.sent).toEqual([{ body: { afterCall: { runId: late.runId, waited: MAX_CAPACITY_WAIT_SECONDS } }, delaySeconds: 30 }]);
    await deliver(lateEnv, queue.sent[0].body);
    expect((await leftBehind(late)).status).toBe("completed");
    expect(ai.asked).toHaveLength(1);
  }, 60_000);
});
