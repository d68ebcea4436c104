// The demo agent's starter test suite (docs/agent-tests.md): two scenarios the demo adds to its agent and runs once
// each before the campaign dials anyone. Each is a test call in the Worker over a carrier's media protocol (nothing
// dialed, no carrier asked); the tool the agent calls for Grace is mocked, so the suite needs no customer system.

export const DEMO_SCENARIOS = [
  {
    name: "happy path",
    description: "Ada wants to hear the offer and needs twelve seats.",
    variables: { first_name: "Ada" },
    protocol: "twilio",
    caller: {
      type: "script",
      steps: [
        { action: "say", text: "Sure, tell me more." },
        { action: "say", text: "We need twelve seats." },
      ],
    },
    expectations: {
      nodes_reached: { nodes: ["start", "pitch", "bye"], in_order: true },
      extraction: { seats: 12 },
      disposition: "interested",
      max_answer_latency_ms: 5000,
      never_says: ["sales team"],
    },
  },
  {
    name: "books with sales",
    description: "Grace needs twelve seats: the agent checks availability (mocked) and hands her to sales.",
    variables: { first_name: "Grace" },
    protocol: "vonage",
    caller: {
      type: "script",
      steps: [
        { action: "say", text: "Sure, tell me more." },
        { action: "say", text: "We need twelve seats." },
      ],
    },
    mock_tools: [{ tool: "check_availability", status: 200, body: { available: true, seats_free: 40, earliest_start: "next Monday" } }],
    expectations: {
      nodes_reached: { nodes: ["start", "pitch", "sales"], in_order: true },
      tools_called: [{ name: "check_availability", arguments: { seats: 12 } }],
      transfer: { destination: "+14155550188", mode: "cold" },
    },
  },
];

/**
 * Adds the starter scenarios to the agent, runs the suite once per scenario and prints each scenario's verdict (and
 * every failed expectation's evidence). Returns the test run.
 */
export async function runDemoSuite(api, agentId) {
  for (const s of DEMO_SCENARIOS) await api("POST", `/workflow/${agentId}/tests/scenarios`, s);
  const started = Date.now();
  // ?wait=true: the answer comes once every call is judged (the run itself would go on without the request).
  const run = await api("POST", `/workflow/${agentId}/tests/runs?wait=true`, { repetitions: 1 });
  for (const s of run.scenarios) {
    const checks = s.expectations.map((e) => e.expectation).join(", ");
    console.log(`  ${s.name} (over ${s.protocol}): ${s.status}, ${s.passed} of ${s.repetitions} call(s) · checked ${checks}`);
    for (const r of s.runs) {
      if (r.error) console.log(`    call ${r.repetition}: ${r.error}`);
      for (const v of r.verdicts.filter((x) => !x.passed)) console.log(`    call ${r.repetition}: ${v.expectation} failed: ${v.evidence}`);
    }
  }
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`  test suite ${run.status} (test run ${run.id}, agent version ${run.version_number}, ${secs} s)`);
  return run;
}
