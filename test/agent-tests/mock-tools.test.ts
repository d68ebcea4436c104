// A scenario's mock_tools answer the agent's HTTP tools on a test call: the customer's system (a stand-in on
// 127.0.0.1 that records every request) is never asked, the run records the mock's status, and a tool the scenario
// does not mock is called as on a real call.
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { ScenarioInput } from "../../src/agent-tests/schemas";
import { runRepetition } from "../../src/agent-tests/test-call";
import type { ScriptStep } from "../../src/agent/scripted-model";
import { getDb } from "../../src/lib/db";
import { loadUsableWorkflow } from "../../src/workflows/store";
import { call, createOrg } from "../helpers";

const PORT = inject("toolStandinPort");

const SCRIPT: ScriptStep[] = [
  { user: "tell me more", prompt: "Ask about", call: { name: "lookup_order", arguments: { order: "A17" } } },
  { user: "tell me more", prompt: "Ask about", say: "Thanks for waiting.", call: { name: "done" } },
  { prompt: "Thank them", say: "Goodbye!", call: { name: "end_call" } },
];

async function toolAgent(key: string, url = `http://127.0.0.1:${PORT}/tool/${key}`) {
  const org = await createOrg();
  // The stand-in is on loopback: the organization allows private addresses, so an unmocked call would reach it.
  const policy = await call("PUT", "/api/v1/organizations/calling-policy", { key: org.key, body: { allow_private_pbx: true } });
  expect(policy.status, policy.text).toBe(200);
  const res = await call("POST", "/api/v1/workflow/create", {
    key: org.key,
    body: {
      name: "orders",
      workflow_definition: {
        tools: [
          {
            name: "lookup_order",
            description: "Look up the caller's order",
            parameters: { type: "object", properties: { order: { type: "string" } }, required: ["order"] },
            url,
            method: "POST",
            timeout_ms: 3000,
            nodes: ["start"],
          },
        ],
        nodes: [
          { id: "start", type: "startCall", data: { prompt: "Ask about the order.", greeting: "Hi there!" } },
          { id: "bye", type: "endCall", data: { prompt: "Thank them and say goodbye." } },
        ],
        edges: [{ id: "e1", source: "start", target: "bye", data: { label: "done", condition: "The question was answered" } }],
      },
      workflow_configurations: { voice_agent: { llm: { provider: "scripted", script: SCRIPT } } },
    },
  });
  expect(res.status, res.text).toBe(200);
  return loadUsableWorkflow(getDb(env), org.id, res.json.id);
}

const scenario = (mock_tools: unknown[]) =>
  ScenarioInput.parse({
    name: "order",
    protocol: "twilio",
    caller: { type: "script", steps: [{ action: "say", text: "Sure, tell me more." }] },
    mock_tools,
    expectations: { tools_called: [{ name: "lookup_order", arguments: { order: "A17" } }], end_reason: "agent_hangup" },
  });

const seen = async (key: string) => (await (await fetch(`http://127.0.0.1:${PORT}/_log?key=${key}`)).json()) as unknown[];

async function toolRecord(runId: number | null) {
  const row = await env.DB.prepare("SELECT details_key FROM workflow_runs WHERE id = ?").bind(runId).first<{ details_key: string | null }>();
  const obj = row?.details_key ? await env.UPLOADS.get(row.details_key) : null;
  const details = obj ? ((await obj.json()) as { tool_calls?: Array<Record<string, unknown>> }) : null;
  return details?.tool_calls ?? [];
}

// One test at a time: run at once beside a CPU hog, two of them met a request cancelled as hung and "Cannot perform
// I/O on behalf of a different request" (RefcountedFulfiller) in the shared runtime (docs/testing.md).
describe("agent tests' mocked tools", () => {
  it("a mocked tool answers from the scenario: the stand-in is never asked, the run records the mock's status", { timeout: 60_000 }, async () => {
    const key = crypto.randomUUID();
    const agent = await toolAgent(key);
    const r = await runRepetition(env, agent, scenario([{ tool: "lookup_order", status: 201, body: { order: "A17", status: "shipped" } }]), 1);
    expect(r.error).toBeUndefined();
    expect(r.verdicts.filter((v) => !v.passed)).toEqual([]);
    expect(await seen(key)).toEqual([]);
    expect(await toolRecord(r.run_id)).toEqual([expect.objectContaining({ name: "lookup_order", status: "ok", http_status: 201 })]);
  });

  it("a tool the scenario does not mock is called as on a real call", { timeout: 60_000 }, async () => {
    const key = crypto.randomUUID();
    const agent = await toolAgent(key);
    const r = await runRepetition(env, agent, scenario([{ tool: "another_tool", status: 500, body: null }]), 1);
    expect(r.passed).toBe(true);
    expect(await seen(key)).toEqual([expect.objectContaining({ method: "POST", body: '{"order":"A17"}' })]);
    expect(await toolRecord(r.run_id)).toEqual([expect.objectContaining({ name: "lookup_order", status: "ok", http_status: 200 })]);
  });

  it("a tool's URL wrong: the call is made and fails, so the named expectation fails with the failed call as evidence", { timeout: 60_000 }, async () => {
    const key = crypto.randomUUID();
    // A closed port on loopback: the tool's request is refused, as an address nobody serves would be.
    const agent = await toolAgent(key, "http://127.0.0.1:9/tool");
    const r = await runRepetition(env, agent, scenario([]), 1);
    expect(r.error).toBeUndefined();
    const v = r.verdicts.find((x) => x.expectation === "tools_called.0");
    expect(v).toMatchObject({
      passed: false,
      expected: { name: "lookup_order", arguments: { order: "A17" } },
      actual: { name: "lookup_order", status: "error" },
    });
    expect(v?.evidence).toContain('calls of lookup_order: lookup_order({"order":"A17"}) error');
    // The same call counts where the scenario says any call will do.
    const lenient = scenario([]);
    lenient.expectations.tools_called = [{ name: "lookup_order", answered: false }];
    const again = await runRepetition(env, agent, lenient, 1);
    expect(again.verdicts.find((x) => x.expectation === "tools_called.0")?.passed).toBe(true);
  });
});
