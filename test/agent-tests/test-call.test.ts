// One test call of the seats agent, over a carrier's own media protocol, spoken to by the scripted caller.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runRepetition } from "../../src/agent-tests/test-call";
import { ScenarioInput } from "../../src/agent-tests/schemas";
import { getDb } from "../../src/lib/db";
import { loadUsableWorkflow } from "../../src/workflows/store";
import seats from "../fixtures/seats-agent.json";
import { call, createOrg } from "../helpers";

async function seatsAgent() {
  const org = await createOrg();
  const res = await call("POST", "/api/v1/workflow/create", {
    key: org.key,
    body: {
      name: "seats",
      workflow_definition: seats.definition,
      call_disposition_codes: { disposition_codes: seats.disposition_codes },
      workflow_configurations: { voice_agent: { llm: { provider: "scripted", script: seats.script } } },
    },
  });
  expect(res.status, res.text).toBe(200);
  return { org, agent: await loadUsableWorkflow(getDb(env), org.id, res.json.id) };
}

// Concurrent: each call has its own organization and agent, and waits on the wall clock rather than the CPU.
describe.concurrent("a test call", () => {
  it.each(["twilio", "vonage", "telnyx"] as const)(
    "walks the seats agent's happy path over %s",
    async (protocol) => {
      const { agent } = await seatsAgent();
      const scenario = ScenarioInput.parse({
        name: "happy",
        protocol,
        variables: { first_name: "Ada" },
        caller: {
          type: "script",
          steps: [
            { action: "say", text: "Sure, tell me more." },
            { action: "say", text: "We need twelve seats." },
          ],
        },
        expectations: { nodes_reached: { nodes: ["start", "pitch", "bye"], in_order: true }, extraction: { seats: 12 }, disposition: "interested" },
      });
      const r = await runRepetition(env, agent, scenario, 1);
      expect(r.error).toBeUndefined();
      expect(r.verdicts.filter((v) => !v.passed)).toEqual([]);
      expect(r.passed).toBe(true);
      expect(r.transcript.map((t) => t.text)).toContain("We need twelve seats.");
      const row = await env.DB.prepare("SELECT is_test, provider, telephony_configuration_id FROM workflow_runs WHERE id = ?").bind(r.run_id).first();
      expect(row).toEqual({ is_test: 1, provider: protocol, telephony_configuration_id: null });
    },
    60_000,
  );
});
