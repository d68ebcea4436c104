// The Tests tab's pure parts (no DOM): a scenario as editable JSON and back, a 422 item's place, what a test run's
// results say in words (pass rates, flaky scenarios and expectations). Unit-tested in test/dashboard/.

/** A new scenario's starting point: a two-line scripted caller and a few expectations (docs/agent-tests.md). */
export const NEW_SCENARIO = {
  description: "",
  caller: {
    type: "script",
    steps: [
      { action: "say", text: "Sure, tell me more." },
      { action: "pause", ms: 500 },
    ],
  },
  variables: { first_name: "Ada" },
  protocol: "twilio",
  mock_tools: [],
  expectations: { nodes_reached: { nodes: ["start"], in_order: true }, never_says: ["sorry, could you say that again"] },
};

/** The fields the API adds to a stored scenario (not sent back) and the name (a field of its own in the form). */
const NOT_EDITED = ["id", "workflow_id", "revision", "agent_version", "created_at", "updated_at", "name"];

/** A stored scenario as the JSON the editor shows. */
export function editableJson(scenario) {
  const copy = { ...(scenario ?? NEW_SCENARIO) };
  for (const k of NOT_EDITED) delete copy[k];
  return JSON.stringify(copy, null, 2);
}

/** The request body from the form: `{ body }`, or `{ error }` when the JSON is not an object. */
export function scenarioBody(name, jsonText) {
  let parsed;
  try {
    parsed = JSON.parse(jsonText);
  } catch (err) {
    return { error: `Not JSON: ${err.message}` };
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return { error: "The scenario must be a JSON object" };
  return { body: { ...parsed, name } };
}

/** A 422 item's place in the scenario, as the JSON shows it: ["body", "caller", "steps", 0, "text"] → caller.steps[0].text. */
export function scenarioPath(loc) {
  const rest = (loc ?? []).slice(loc?.[0] === "body" ? 1 : 0);
  return rest.reduce((p, k) => (typeof k === "number" ? `${p}[${k}]` : p ? `${p}.${k}` : String(k)), "") || "(the scenario)";
}

/** Where a 422's items go in the form: the name's at the name field, every other at the JSON (by its path). */
export function splitProblems(detail) {
  const name = [];
  const json = [];
  for (const d of detail ?? []) {
    if (d.loc?.[0] === "body" && d.loc[1] === "name" && d.loc.length === 2) name.push(d.msg ?? d.type);
    else json.push(`${scenarioPath(d.loc)}: ${d.msg ?? d.type}`);
  }
  return { name, json };
}

/** The caller in a few words: "script: say, press, say" or "persona (8 turns)". */
export function callerSummary(caller) {
  if (caller?.type === "persona") return `persona (up to ${caller.max_turns ?? 8} turns)`;
  return `script: ${(caller?.steps ?? []).map((s) => s.action).join(", ")}`;
}

export const pct = (rate) => `${Math.round((rate ?? 0) * 100)}%`;

/** A verdict's value as text: JSON for objects and arrays, a dash for nothing. */
export function valueText(v) {
  if (v === undefined || v === null) return "—";
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** An expectation's standing over the repetitions: passed in all, failed in all, or flaky (some of each). */
export function standing(e) {
  return e.passed === e.of ? "passed" : e.passed === 0 ? "failed" : "flaky";
}

/** The flaky scenarios of a run's results, and in each the expectations that passed only sometimes. */
export function flakyOf(run) {
  return (run.scenarios ?? [])
    .filter((s) => s.status === "flaky")
    .map((s) => ({
      name: s.name,
      passed: s.passed,
      of: s.repetitions,
      expectations: s.expectations.filter((e) => standing(e) === "flaky").map((e) => e.expectation),
    }));
}

/** The run's result in one sentence. */
export function summaryText(run) {
  if (run.status === "running") return "Running: the test calls are under way.";
  const s = run.summary;
  if (!s) return run.error ? `Ended in error: ${run.error}` : `Ended: ${run.status}.`;
  if (s.status === "passed") return `Passed: ${s.scenarios === 1 ? "the scenario" : `all ${s.scenarios} scenarios`} passed in every repetition.`;
  const parts = [s.failed && `${s.failed} failed`, s.flaky && `${s.flaky} flaky`].filter(Boolean).join(", ");
  return `Failed: ${s.passed} of ${s.scenarios} scenario${s.scenarios === 1 ? "" : "s"} passed (${parts}); ${pct(s.pass_rate)} of the test calls passed.`;
}

/** What a test call ran on, in one sentence (older runs name neither: null). */
export function enginesText(r) {
  if (!r.agent_model && !r.caller_voice) return null;
  const agent = !r.agent_model
    ? null
    : r.agent_model === "scripted"
      ? "its scripted model"
      : r.agent_model === "offline"
        ? "local development's offline model"
        : `its own model, ${r.agent_model}`;
  const voice = !r.caller_voice ? null : r.caller_voice === "offline" ? "the offline caller voice" : `a real voice, ${r.caller_voice}`;
  return [agent && `The agent ran on ${agent}`, voice && `the caller spoke in ${voice}`].filter(Boolean).join("; ").replace(/^t/, "T") + ".";
}
