// After a call driven through the simulator (Twilio's media protocol, the scripted seats conversation): the agent's
// post-call analysis on the run (conforming to its schema, or failed after one retry), `run.analyzed` delivered, and
// the agent's webhook node delivered through the queue with its rendered template, verifiable with the
// standardwebhooks library and listed in the signing endpoint's delivery log.
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, inject, it } from "vitest";
import type { ScriptStep } from "../../src/agent/scripted-model";
import { call } from "../helpers";
import { createEndpoint } from "../webhooks/support";
import { DEFINITION, prepareScripted, runWhen, seatsConversation } from "./conversation-support";
import { connect } from "./media-support";
import { eventually, type Setup, setup, startCall } from "./support";

const BASE = `http://127.0.0.1:${inject("webhookReceiverPort")}`;
type Seen = { headers: Record<string, string>; body: string };
const seen = async (key: string): Promise<Seen[]> => (await fetch(`${BASE}/_log?key=${key}`)).json();
const arrived = (key: string, n = 1) =>
  eventually(
    () => seen(key),
    (s) => s.length >= n,
    15_000,
  );

const ANALYSIS = {
  summary_prompt: "One sentence.",
  data_schema: {
    type: "object",
    properties: { seats: { type: "integer", minimum: 1 }, callback_at: { type: "string", format: "date-time" } },
    required: ["seats"],
    additionalProperties: false,
  },
  success_criteria: "The callee said how many seats they need.",
};
const GOOD = { summary: "Ada wants 12 seats.", data: { seats: 12 }, success: true, success_reason: "She gave a number." };
const BAD = { summary: "Ada wants seats.", data: { seats: "twelve" }, success: true, success_reason: "She gave a number." };
const TEMPLATE = {
  event: "seats_lead",
  lead: { name: "{{first_name}}", phone: "{{phone_number}}", seats: "{{gathered_context.seats}}" },
  outcome: "{{disposition}}",
  note: "Run {{run_name}} ended: {{disposition}}",
  summary: "{{analysis.summary}}",
  transcript: "{{transcript}}",
  recording: "{{recording_url}}",
};

/** The seats agent with a webhook node and an analysis whose model answers `analysisScript`; its call, conversed. */
async function analysedCall(s: Setup, analysisScript: ScriptStep[], nodeKey: string, endpointId: number) {
  const definition = {
    ...DEFINITION,
    nodes: [
      ...DEFINITION.nodes,
      { id: "crm", type: "webhook", data: { url: "https://hooks.example.com/crm", payload_template: TEMPLATE, webhook_endpoint_id: endpointId } },
    ],
  };
  const wf = await call("POST", "/api/v1/workflow/create", {
    key: s.org.key,
    body: {
      name: "seats with analysis",
      workflow_definition: definition,
      call_disposition_codes: { disposition_codes: ["interested", "not_interested"] },
      workflow_configurations: { analysis: ANALYSIS, voice_agent: { llm: { provider: "scripted", script: analysisScript } } },
    },
  });
  expect(wf.status, wf.text).toBe(200);
  const runId = await startCall({ ...s, agent: wf.json });
  // The node's address is the test's local receiver, which the definition's own check (public addresses only) would
  // refuse: it is swapped in after the call started. Delivery allows it because the test Worker is local development.
  const local = { ...definition, nodes: definition.nodes.map((n) => (n.id === "crm" ? { ...n, data: { ...n.data, url: `${BASE}/hook/${nodeKey}` } } : n)) };
  await env.DB.prepare("UPDATE workflow_definitions SET definition = ? WHERE workflow_id = ?").bind(JSON.stringify(local), wf.json.id).run();
  await prepareScripted(runId);
  await seatsConversation(await connect("twilio", runId));
  return { runId, agentId: wf.json.id as number };
}

describe("after the call", () => {
  it("the analysis conforms to its schema, run.analyzed arrives, and the webhook node's body is its template filled, signed", async () => {
    const s = await setup("twilio");
    const [nodeKey, eventKey] = [crypto.randomUUID(), crypto.randomUUID()];
    const ep = await createEndpoint(s.org, { url: `${BASE}/hook/${eventKey}`, events: ["run.analyzed"] });
    const { runId, agentId } = await analysedCall(s, [{ prompt: "post-call analysis", say: JSON.stringify(GOOD) }], nodeKey, ep.id);

    const run = await runWhen(s, agentId, runId, (r) => !!r.analysis, 500);
    expect(run.analysis).toEqual({ status: "completed", ...GOOD, error: null, attempts: 1, analyzed_at: expect.any(String) });
    expect(run.disposition).toBe("interested");

    const [event] = await arrived(eventKey);
    expect(new Webhook(ep.secret).verify(event.body, event.headers)).toMatchObject({
      type: "run.analyzed",
      data: { run_id: runId, disposition: "interested", analysis: { status: "completed", summary: GOOD.summary, data: GOOD.data } },
    });

    const [node] = await arrived(nodeKey);
    const body = new Webhook(ep.secret).verify(node.body, node.headers) as Record<string, any>;
    expect(body).toEqual({
      event: "seats_lead",
      lead: { name: "Ada", phone: run.phone_number, seats: 12 },
      outcome: "interested",
      note: `Run WR-${runId} ended: interested`,
      summary: GOOD.summary,
      transcript: run.transcript.map((t: any) => ({ role: t.role, text: t.text, start_ms: t.start_ms, end_ms: t.end_ms })),
      recording: expect.stringMatching(new RegExp(`/api/v1/recordings/${runId}\\?expires=\\d+&signature=[0-9a-f]{64}$`)),
    });

    const log = await call("GET", `/api/v1/webhooks/${ep.id}/deliveries`, { key: s.org.key });
    const mine = log.json.items.find((d: any) => d.node_id === "crm");
    expect(mine).toMatchObject({ event: "agent.webhook_node", run_id: runId, url: `${BASE}/hook/${nodeKey}`, message_id: node.headers["webhook-id"] });
    expect(
      await eventually(
        async () => (await call("GET", `/api/v1/webhooks/${ep.id}/deliveries`, { key: s.org.key })).json.items[0].status,
        (st) => st === "succeeded",
      ),
    ).toBe("succeeded");
  });

  it("an answer that does not conform is retried once; a second bad one is recorded as failed with its reason", async () => {
    const s = await setup("twilio");
    const [nodeKey, eventKey] = [crypto.randomUUID(), crypto.randomUUID()];
    const ep = await createEndpoint(s.org, { url: `${BASE}/hook/${eventKey}`, events: ["run.analyzed"] });
    const { runId, agentId } = await analysedCall(s, [{ prompt: "post-call analysis", say: JSON.stringify(BAD) }], nodeKey, ep.id);
    const run = await runWhen(s, agentId, runId, (r) => !!r.analysis, 500);
    expect(run.analysis).toMatchObject({ status: "failed", attempts: 2, summary: null, data: null, success: null });
    expect(run.analysis.error).toMatch(/^The model's answer did not conform twice; last: "data" does not conform to the schema at data\.seats/);
    const [event] = await arrived(eventKey);
    expect(JSON.parse(event.body)).toMatchObject({ type: "run.analyzed", data: { run_id: runId, analysis: { status: "failed" } } });
  });

  it("a first bad answer and a good second one: completed after two requests", async () => {
    const s = await setup("twilio");
    const ep = await createEndpoint(s.org, { url: `${BASE}/hook/${crypto.randomUUID()}`, events: ["run.analyzed"] });
    const script = [
      { user: "was not valid", say: JSON.stringify(GOOD) },
      { prompt: "post-call analysis", say: "The callee wants twelve seats." },
    ];
    const { runId, agentId } = await analysedCall(s, script, crypto.randomUUID(), ep.id);
    const run = await runWhen(s, agentId, runId, (r) => !!r.analysis, 500);
    expect(run.analysis).toMatchObject({ status: "completed", attempts: 2, data: { seats: 12 } });
  });

  it("an analysis the model cannot fill is refused at save with a 422 naming the field", async () => {
    const s = await setup("twilio");
    const res = await call("POST", "/api/v1/workflow/create", {
      key: s.org.key,
      body: {
        name: "bad analysis",
        workflow_definition: DEFINITION,
        workflow_configurations: { analysis: { data_schema: { type: "array" }, success_criteria: "" } },
      },
    });
    expect(res.status).toBe(422);
    const locs = res.json.detail.map((d: any) => d.loc.join("."));
    expect(locs).toEqual(
      expect.arrayContaining(["body.workflow_configurations.analysis.data_schema", "body.workflow_configurations.analysis.success_criteria"]),
    );
    expect(res.json.detail.find((d: any) => d.loc.at(-1) === "data_schema").msg).toMatch(/Must describe an object/);
  });
});
