// The demo's seats agent with its starter suite (test/fixtures/seats-suite.json: happy path, not interested, asks for
// a person, presses a key, interrupts, stays silent) run over the API, offline, on Twilio's, Vonage's (16 kHz) and
// Telnyx's protocols; a broken agent fails the named expectations with their evidence.
import { describe, expect, it } from "vitest";
import suite from "../fixtures/seats-suite.json";
import { call, createOrg, type Org } from "../helpers";
import { runTestsSending } from "./run-helpers";

async function agentWithSuite(org: Org, protocol: string, agent: Record<string, unknown> = suite.agent) {
  const res = await call("POST", "/api/v1/workflow/create", { key: org.key, body: agent });
  expect(res.status, res.text).toBe(200);
  const id = res.json.id as number;
  for (const s of suite.scenarios) {
    const made = await call("POST", `/api/v1/workflow/${id}/tests/scenarios`, { key: org.key, body: { ...s, protocol } });
    expect(made.status, made.text).toBe(200);
  }
  return id;
}

const failures = (run: any) =>
  run.scenarios.flatMap((s: any) =>
    s.runs.flatMap((r: any) => [
      ...(r.error ? [`${s.name}: ${r.error}`] : []),
      ...r.verdicts.filter((v: any) => !v.passed).map((v: any) => `${s.name}: ${v.expectation}: ${v.evidence}`),
    ]),
  );

// One after another: each test records every request leaving the isolate while its run goes on (none may reach a
// carrier), and three runs at once, beside CI's other work at load 8, met requests they did not make.
describe("an agent's test suite", () => {
  it.each(["twilio", "vonage", "telnyx"])(
    "passes offline over %s",
    async (protocol) => {
      const org = await createOrg();
      const id = await agentWithSuite(org, protocol);
      const { run, sent } = await runTestsSending(org.key, id, { repetitions: 1 });
      const res = { json: run };
      // No carrier was asked anything: not the simulator (every carrier API's address here), nor any other host.
      expect(sent.filter((u) => !u.startsWith("http://edgedial.test/"))).toEqual([]);
      expect(failures(res.json)).toEqual([]);
      expect(res.json).toMatchObject({ status: "passed", version_number: 1, summary: { scenarios: 6, passed: 6, flaky: 0, pass_rate: 1 } });
      // Every repetition is a call of its own, kept with its transcript; all are test runs on no configuration.
      const runIds = res.json.scenarios.flatMap((s: any) => s.runs.map((r: any) => r.run_id));
      expect(new Set(runIds).size).toBe(6);
      const listed = await call("GET", `/api/v1/workflow/${id}/tests/runs`, { key: org.key });
      expect(listed.json.items.map((r: any) => r.id)).toEqual([res.json.id]);
      // They are not the agent's calls: its call list and its latency leave them out; each stays readable by id.
      const calls = await call("GET", `/api/v1/workflow/${id}/runs`, { key: org.key });
      expect(calls.json.items).toEqual([]);
      const latency = await call("GET", `/api/v1/workflow/${id}/latency`, { key: org.key });
      expect(latency.json.calls).toBe(0);
      expect((await call("GET", `/api/v1/workflow/${id}/runs/${runIds[0]}`, { key: org.key })).status).toBe(200);
    },
    180_000,
  );

  it("fails the named expectations, with their evidence, when the agent is broken (an edge removed)", async () => {
    const org = await createOrg();
    const broken = structuredClone(suite.agent);
    broken.workflow_definition.edges = broken.workflow_definition.edges.filter((e) => e.id !== "e2");
    const id = await agentWithSuite(org, "twilio", broken);
    const happy = (await call("GET", `/api/v1/workflow/${id}/tests/scenarios`, { key: org.key })).json.items[0];
    expect(happy.name).toBe("happy path");
    const res = await call("POST", `/api/v1/workflow/${id}/tests/runs?wait=true`, { key: org.key, body: { scenario_id: happy.id, repetitions: 1 } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ status: "failed", summary: { scenarios: 1, passed: 0, failed: 1 } });
    const verdicts = Object.fromEntries(res.json.scenarios[0].runs[0].verdicts.map((v: any) => [v.expectation, v]));
    expect(verdicts.nodes_reached).toMatchObject({ passed: false, evidence: "never reached bye (went start → pitch)" });
    expect(verdicts["extraction.seats"]).toMatchObject({ passed: false, expected: 12, actual: null });
    expect(verdicts.disposition.passed).toBe(false);
    // The model had no way on: it asked again, which the scenario says the agent must never say.
    expect(verdicts["never_says.sorry, could you say that again"]).toMatchObject({ passed: false });
    expect(verdicts["never_says.sorry, could you say that again"].evidence).toContain("Sorry, could you say that again?");
  }, 120_000);
});
