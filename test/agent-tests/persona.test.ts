// A persona caller and the rubric's judge against stand-in OpenAI-compatible models (test/agent-tests/
// model-standin.global.ts): the persona's lines are decided during the call from what the agent said, spoken in the
// caller voice the agent's offline speech-to-text learns mid-call, and the transcript is judged per criterion with
// the judge's reasoning kept. A failing model makes the repetition an error saying why.
import { describe, expect, inject, it } from "vitest";
import suite from "../fixtures/seats-suite.json";
import { call, createOrg } from "../helpers";
import { runTests, runTestsSending } from "./run-helpers";

const PORT = inject("modelStandinPort");
const model = (api_key: string) => ({ base_url: `http://127.0.0.1:${PORT}/v1`, model: "standin-small", api_key });

const PERSONA = {
  name: "Ada as a persona",
  variables: { first_name: "Ada" },
  caller: {
    type: "persona",
    prompt: 'You are Ada, who runs a small office. You say, in turn: "Yes, tell me more." and then "I need twelve seats."',
    max_turns: 4,
  },
  expectations: {
    nodes_reached: { nodes: ["start", "pitch", "bye"], in_order: true },
    extraction: { seats: 12 },
    disposition: "interested",
    rubric: ['The agent asks how many "seats" they need', 'The agent offers a "refund"'],
  },
};

async function personaAgent(allowPrivate = true) {
  const org = await createOrg();
  // The stand-in models are on loopback: the organization's URL policy must allow private addresses.
  if (allowPrivate) expect((await call("PUT", "/api/v1/organizations/calling-policy", { key: org.key, body: { allow_private_pbx: true } })).status).toBe(200);
  const agent = await call("POST", "/api/v1/workflow/create", { key: org.key, body: suite.agent });
  expect(agent.status, agent.text).toBe(200);
  const scenario = await call("POST", `/api/v1/workflow/${agent.json.id}/tests/scenarios`, { key: org.key, body: PERSONA });
  expect(scenario.status, scenario.text).toBe(200);
  return { key: org.key, id: agent.json.id as number };
}

const standinLog = async (key: string) => (await fetch(`http://127.0.0.1:${PORT}/_log?key=${key}`)).json() as Promise<any[]>;

// One test at a time: run at once beside a CPU hog (2026-11-29), two of them met a request cancelled as hung and
// RefcountedFulfiller in their first requests, as mock-tools' did (docs/testing.md).
describe("a persona caller and the model judge", () => {
  it("talks the call through from what the agent says, and the judge's verdict and reasoning are kept per criterion", async () => {
    const { key, id } = await personaAgent();
    const apiKey = `persona-${crypto.randomUUID()}`;
    const { run, sent } = await runTestsSending(key, id, { repetitions: 1, model: model(apiKey) });
    // Only the model was asked: no carrier host, not even the simulator's.
    expect(sent.filter((u) => !u.startsWith("http://edgedial.test/") && !u.startsWith(`http://127.0.0.1:${PORT}/v1/`))).toEqual([]);
    expect(sent.filter((u) => u.startsWith(`http://127.0.0.1:${PORT}/v1/`)).length).toBeGreaterThanOrEqual(4);
    const rep = run.scenarios[0].runs[0];
    expect(rep.error).toBeUndefined();
    // The persona's lines, heard by the agent's offline speech-to-text, moved it on: the seats were gathered.
    expect(rep.caller.filter((e: any) => e.action === "say").map((e: any) => e.detail)).toEqual(["Yes, tell me more.", "I need twelve seats."]);
    expect(rep.transcript.filter((t: any) => t.role !== "agent").map((t: any) => t.text)).toEqual(["Yes, tell me more.", "I need twelve seats."]);
    const verdicts = Object.fromEntries(rep.verdicts.map((v: any) => [v.expectation, v]));
    expect(verdicts["extraction.seats"].passed).toBe(true);
    expect(verdicts.nodes_reached.passed).toBe(true);
    expect(verdicts['rubric.The agent asks how many "seats" they need']).toMatchObject({
      passed: true,
      actual: true,
      evidence: 'The transcript mentions "seats".',
    });
    expect(verdicts['rubric.The agent offers a "refund"']).toMatchObject({ passed: false, actual: false, evidence: 'The transcript never mentions "refund".' });
    expect(run).toMatchObject({ status: "failed", summary: { passed: 0, failed: 1 } });

    // The persona read the call: its first question carried the agent's greeting; the judge saw the transcript.
    const asked = await standinLog(apiKey);
    const personaAsks = asked.filter((r) => !r.messages[0].content.startsWith("You judge"));
    expect(personaAsks[0].messages).toContainEqual({ role: "user", content: "Hi Ada! Press 1 or say yes to hear about our offer." });
    expect(personaAsks[0].messages[0].content).toContain("You are Ada, who runs a small office.");
    const judged = asked.filter((r) => r.messages[0].content.startsWith("You judge"));
    expect(judged).toHaveLength(2);
    expect(judged[0].messages[1].content).toContain("Caller: I need twelve seats.");
  }, 180_000);

  it("makes the repetition an error saying why when the caller model fails", async () => {
    const { key, id } = await personaAgent();
    const run = await runTests(key, id, { repetitions: 1, model: model(`fail-${crypto.randomUUID()}`) });
    const rep = run.scenarios[0].runs[0];
    expect(rep.passed).toBe(false);
    expect(rep.error).toBe("The persona caller's model failed: The model endpoint answered HTTP 503: The stand-in model is overloaded.");
    // The caller hung up at once, saying why.
    expect(rep.caller.at(-1)).toMatchObject({ action: "hangup", detail: expect.stringContaining("HTTP 503") });
  }, 120_000);

  it("refuses a model endpoint the organization's URL policy does not allow; with none given, Workers AI is the model", async () => {
    const { key, id } = await personaAgent(false);
    const refused = await call("POST", `/api/v1/workflow/${id}/tests/runs`, { key, body: { repetitions: 1, model: model("persona-x") } });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json.detail[0].loc).toEqual(["body", "model", "base_url"]);
    expect(refused.json.detail[0].msg).toMatch(/^The test model's endpoint is refused: /);
    // No model given: the Worker's AI binding plays the caller (here a binding that reaches no account, so it fails, saying so).
    const run = await runTests(key, id, { repetitions: 1 });
    expect(run.scenarios[0].runs[0].error).toMatch(/^The persona caller's model failed: Workers AI failed: /);
  }, 60_000);
});
