// A test call of an agent on a real model runs it on that model: an OpenAI-compatible endpoint (the stand-in of
// model-standin.global.ts, given the seats script to answer as the agent) or Workers AI through the deployment's AI
// binding (faked at the binding: fake-ai.ts). The model is asked with the agent's prompts and the caller's words
// (heard by the offline speech-to-text), its replies are the transcript, its tool calls are honored; the repetition
// names what the agent ran on. A model that cannot be reached makes the repetition an error saying so.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, inject, it } from "vitest";
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import suite from "../fixtures/seats-suite.json";
import { call, createOrg } from "../helpers";
import { AgentTestAi } from "./fake-ai";
import { runTests } from "./run-helpers";

const PORT = inject("modelStandinPort");
const SCRIPT = suite.agent.workflow_configurations.voice_agent.llm.script;
const [HAPPY, , PERSON] = suite.scenarios;

/** The seats agent on `llm`, with the happy path and the transfer scenario. */
async function seatsOn(llm: Record<string, unknown>) {
  const org = await createOrg();
  // The stand-in is on loopback: the organization's URL policy must allow private addresses.
  expect((await call("PUT", "/api/v1/organizations/calling-policy", { key: org.key, body: { allow_private_pbx: true } })).status).toBe(200);
  const body = { ...suite.agent, workflow_configurations: { voice_agent: { llm } } };
  const agent = await call("POST", "/api/v1/workflow/create", { key: org.key, body });
  expect(agent.status, agent.text).toBe(200);
  for (const s of [HAPPY, PERSON])
    expect((await call("POST", `/api/v1/workflow/${agent.json.id}/tests/scenarios`, { key: org.key, body: s })).status).toBe(200);
  return { key: org.key, id: agent.json.id as number };
}

const failures = (run: any) =>
  run.scenarios.flatMap((s: any) =>
    s.runs.flatMap((r: any) => [
      ...(r.error ? [r.error] : []),
      ...r.verdicts.filter((v: any) => !v.passed).map((v: any) => `${s.name}: ${v.expectation}: ${v.evidence}`),
    ]),
  );

const realAi = (env as { AI?: unknown }).AI;
afterEach(() => {
  (env as { AI?: unknown }).AI = realAi;
});

describe("a test call on the agent's own model", () => {
  // First and alone: it swaps the deployment's AI binding, which the others' sessions would see too.
  it("runs an agent on Workers AI through the deployment's AI binding", async () => {
    const ai = new AgentTestAi(SCRIPT);
    (env as { AI?: unknown }).AI = ai;
    const { key, id } = await seatsOn({ provider: "workers-ai" });
    const run = await runTests(key, id, { repetitions: 1, scenario_id: undefined });
    expect(failures(run)).toEqual([]);
    expect(run.scenarios.map((s: any) => s.runs[0].agent_model)).toEqual([`workers-ai:${WORKERS_AI_CHAT_MODEL}`, `workers-ai:${WORKERS_AI_CHAT_MODEL}`]);
    const chats = ai.asked.filter((a) => a.model === WORKERS_AI_CHAT_MODEL);
    expect(chats.some((c) => c.inputs.messages[0].content.includes("Ask Ada if they want to hear about the offer."))).toBe(true);
    const heard = chats.flatMap((c) => c.inputs.messages.filter((m: any) => m.role === "user").map((m: any) => m.content));
    expect(heard).toEqual(expect.arrayContaining(["Sure, tell me more.", "We need twelve seats.", "Can I talk to a person?"]));
    // Only the model: the caller's lines reached the agent by the offline speech-to-text, its voice is the offline one.
    expect(new Set(ai.asked.map((a) => a.model))).toEqual(new Set([WORKERS_AI_CHAT_MODEL]));
  }, 180_000);

  // The rest at once (each its own organization and stand-in key): their calls wait on the wall clock, not the CPU.
  it.concurrent("runs an agent on an OpenAI-compatible endpoint: the model hears the caller, says the transcript, and its tool calls are honored", async () => {
    const apiKey = `agent-${crypto.randomUUID()}`;
    expect((await fetch(`http://127.0.0.1:${PORT}/_script?key=${apiKey}`, { method: "POST", body: JSON.stringify(SCRIPT) })).status).toBe(204);
    const { key, id } = await seatsOn({ provider: "openai", base_url: `http://127.0.0.1:${PORT}/v1`, model: "standin-agent", api_key: apiKey });
    const run = await runTests(key, id, { repetitions: 1 });
    expect(failures(run)).toEqual([]);
    expect(run).toMatchObject({ status: "passed", summary: { scenarios: 2, passed: 2 } });
    const [happy, person] = run.scenarios.map((s: any) => s.runs[0]);
    expect(happy.agent_model).toBe("openai-compatible:standin-agent");
    // The endpoint's replies are what the agent said; end_call (the happy path) and the transfer were honored.
    expect(happy.transcript.filter((t: any) => t.role === "agent").map((t: any) => t.text)).toEqual([
      "Hi Ada! Press 1 or say yes to hear about our offer.",
      "Great. How many seats do you need?",
      "Thank you, goodbye!",
    ]);
    expect(person.verdicts.find((v: any) => v.expectation === "transfer")).toMatchObject({ passed: true });
    const detail = await call("GET", `/api/v1/workflow/${id}/runs/${happy.run_id}`, { key });
    expect(detail.json).toMatchObject({ end_reason: "agent_hangup", gathered_context: { seats: 12 } });

    // The endpoint was asked with the agent's node prompts and the caller's words, as heard over the call.
    const asked = (await (await fetch(`http://127.0.0.1:${PORT}/_log?key=${apiKey}`)).json()) as any[];
    expect(asked.every((r) => r.model === "standin-agent")).toBe(true);
    const systems = asked.map((r) => r.messages[0].content as string);
    expect(systems.some((s) => s.includes("Ask Ada if they want to hear about the offer."))).toBe(true);
    expect(systems.some((s) => s.includes("Ask Grace if they want to hear about the offer."))).toBe(true);
    const heard = asked.flatMap((r) => r.messages.filter((m: any) => m.role === "user").map((m: any) => m.content));
    expect(heard).toEqual(expect.arrayContaining(["Sure, tell me more.", "We need twelve seats.", "Can I talk to a person?"]));
    expect(asked.some((r) => r.tools?.some((t: any) => t.function.name === "end_call"))).toBe(true);
  }, 180_000);

  it.concurrent("applies the organization's URL policy to the agent's endpoint: refused, nothing is dialed", async () => {
    const apiKey = `agent-${crypto.randomUUID()}`;
    const { key, id } = await seatsOn({ provider: "openai", base_url: `http://127.0.0.1:${PORT}/v1`, model: "standin-agent", api_key: apiKey });
    // Saved while private addresses were allowed; the organization then stops allowing them.
    expect((await call("PUT", "/api/v1/organizations/calling-policy", { key, body: { allow_private_pbx: false } })).status).toBe(200);
    const run = await runTests(key, id, { repetitions: 1 });
    const rep = run.scenarios[0].runs[0];
    expect(rep).toMatchObject({ passed: false, run_id: null, agent_model: "openai-compatible:standin-agent" });
    expect(rep.error).toMatch(/^The agent's model \(openai-compatible:standin-agent\) cannot run: The model endpoint refused: /);
    expect(await (await fetch(`http://127.0.0.1:${PORT}/_log?key=${apiKey}`)).json()).toEqual([]);
  }, 60_000);

  it.concurrent("makes the repetition an error saying why when the agent's model cannot be reached", async () => {
    // Port 9 (discard) on loopback: nothing listens, the connection is refused.
    const { key, id } = await seatsOn({ provider: "openai", base_url: "http://127.0.0.1:9/v1", model: "nowhere", api_key: "k" });
    const started = Date.now();
    const run = await runTests(key, id, { repetitions: 1 });
    expect(Date.now() - started).toBeLessThan(60_000);
    const rep = run.scenarios[0].runs[0];
    expect(rep).toMatchObject({ passed: false, agent_model: "openai-compatible:nowhere" });
    expect(rep.error).toMatch(/^The agent's model \(openai-compatible:nowhere\) failed: The model endpoint could not be reached: /);
    expect(run.status).toBe("failed");
  }, 120_000);
});
