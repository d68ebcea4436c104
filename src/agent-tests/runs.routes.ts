// The agent's test runs over the API: run the suite (or one scenario) now, list the runs, read one with its results.
import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../lib/app";
import { getDb } from "../lib/db";
import { decodeCursor, pageOf, pageQuery, toPage } from "../lib/pagination";
import { errors, idParam, json, refId } from "../lib/schemas";
import { TestModel } from "./models";
import { CallerVoice } from "./caller-speech";
import { agentOf } from "./store";
import { testRunStub } from "./run-object";
import { getTestRun, listTestRuns, newRun, testRunView } from "./suite";

const tags = ["agent tests"];
const AgentId = idParam("workflow_id");
const RunParams = z.object({ ...idParam("workflow_id").shape, ...idParam("test_run_id").shape });
const BASE = "/workflow/{workflow_id}/tests/runs";

const StartRun = z
  .strictObject({
    scenario_id: refId().nullable().optional().openapi({ description: "One scenario; absent or null: the whole suite" }),
    repetitions: z.number().int().min(1).max(10).default(3).openapi({ description: "Calls per scenario (a scenario passing some and not others is flaky)" }),
    model: TestModel.optional().openapi({
      description:
        "The model that plays persona callers and judges rubric criteria: an OpenAI-compatible endpoint (its key is used for this run only). Absent: the agent's workflow_configurations.agent_tests.model, else Workers AI where the deployment has it",
    }),
    caller_voice: CallerVoice.optional().openapi({
      description:
        "The caller's lines spoken by Workers AI's text-to-speech (Aura) through the deployment's AI binding (none usable: a 422). Absent: the agent's workflow_configurations.agent_tests.caller_voice, else the offline caller voice",
    }),
  })
  .openapi("AgentTestRunRequest");

const Verdict = z.object({ expectation: z.string(), passed: z.boolean(), expected: z.unknown(), actual: z.unknown(), evidence: z.string() });
const Repetition = z.object({
  repetition: z.number().int(),
  run_id: z.number().int().nullable().openapi({ description: "The test call's run (GET /workflow/{id}/runs/{run_id}: transcript and recording)" }),
  passed: z.boolean(),
  verdicts: z.array(Verdict),
  caller: z.array(z.object({ at_ms: z.number(), step: z.number().int(), action: z.string(), detail: z.string().optional() })),
  transcript: z.array(z.object({ role: z.string(), text: z.string(), start_ms: z.number(), end_ms: z.number(), interrupted: z.boolean().optional() })),
  agent_model: z.string().optional().openapi({
    description:
      "What the agent ran on: its own model (workers-ai:<model>, openai-compatible:<model>), its scripted model (scripted), or local development's offline model (offline)",
  }),
  caller_voice: z.string().optional().openapi({ description: "How the caller's lines sounded: offline (the caller voice) or workers-ai:<model>:<voice>" }),
  error: z.string().optional(),
});
const ScenarioResult = z.object({
  scenario_id: z.number().int(),
  name: z.string(),
  protocol: z.string(),
  revision: z.number().int(),
  passed: z.number().int(),
  repetitions: z.number().int(),
  pass_rate: z.number(),
  status: z.enum(["passed", "failed", "flaky"]),
  expectations: z.array(z.object({ expectation: z.string(), passed: z.number().int(), of: z.number().int() })),
  runs: z.array(Repetition),
});
const Summary = z.object({
  status: z.enum(["passed", "failed"]),
  scenarios: z.number().int(),
  passed: z.number().int(),
  failed: z.number().int(),
  flaky: z.number().int(),
  pass_rate: z.number(),
});
export const AgentTestRun = z
  .object({
    id: z.number().int(),
    workflow_id: z.number().int(),
    version_number: z.number().int().openapi({ description: "The agent's version the run tested" }),
    scenario_id: z.number().int().nullable(),
    repetitions: z.number().int(),
    status: z.enum(["running", "passed", "failed", "error"]),
    created_at: z.string(),
    finished_at: z.string().nullable(),
    summary: Summary.nullable(),
    scenarios: z.array(ScenarioResult),
    error: z.string().optional().openapi({ description: "Why a run ended `error` (its runner restarted, the agent changed before the calls began)" }),
  })
  .openapi("AgentTestRun");

const StartQuery = z.object({
  wait: z
    .enum(["true", "false"])
    .default("false")
    .openapi({ description: "true: answer (200) when every call is judged, as a script may want; the run goes on if the request is cut off" }),
});

const start = createRoute({
  method: "post",
  path: BASE,
  tags,
  summary: "Run the agent's test suite (or one scenario) against its current version",
  description:
    "Each repetition is a real call session of the agent spoken to over the scenario's carrier protocol by the scripted or persona caller (a test run: no carrier is asked, nothing is dialed). The run is carried by a Durable Object of its own: the answer is 202 with the run `running` at once (follow it at GET …/runs/{test_run_id}), or with `?wait=true` 200 once every call is judged. The newest finished suite run of a version is that version's test result.",
  request: { params: AgentId, query: StartQuery, body: { content: { "application/json": { schema: StartRun } }, required: true } },
  responses: { 200: json(AgentTestRun), 202: json(AgentTestRun), ...errors(401, 404, 409, 422) },
});

/** How often a waiting request reads the run (a suite's calls last seconds each). */
const WAIT_POLL_MS = 500;

const list = createRoute({
  method: "get",
  path: BASE,
  tags,
  summary: "List the agent's test runs, newest first (the history per version)",
  request: { params: AgentId, query: pageQuery },
  responses: { 200: json(pageOf(AgentTestRun)), ...errors(401, 404, 422) },
});

const read = createRoute({
  method: "get",
  path: `${BASE}/{test_run_id}`,
  tags,
  summary: "Get one test run with every expectation's verdict and evidence",
  request: { params: RunParams },
  responses: { 200: json(AgentTestRun), ...errors(401, 404, 422) },
});

export const testRunsRouter = createRouter()
  .openapi(start, async (c) => {
    const { workflow_id } = c.req.valid("param");
    const { scenario_id, repetitions, model, caller_voice } = c.req.valid("json");
    const keyId = c.get("apiKeyId") ?? null;
    const { run, job } = await newRun(c.env, c.get("orgId"), workflow_id, {
      scenarioId: scenario_id ?? null,
      repetitions,
      keyId,
      model,
      callerVoice: caller_voice,
    });
    await testRunStub(c.env, run.id).start(job);
    if (c.req.valid("query").wait !== "true") return c.json(testRunView(run) as z.infer<typeof AgentTestRun>, 202);
    let row = run;
    while (row.status === "running") {
      await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
      row = await getTestRun(getDb(c.env), c.get("orgId"), workflow_id, run.id);
    }
    return c.json(testRunView(row) as z.infer<typeof AgentTestRun>, 200);
  })
  .openapi(list, async (c) => {
    const { workflow_id } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    const db = getDb(c.env);
    await agentOf(db, c.get("orgId"), workflow_id);
    const rows = await listTestRuns(db, c.get("orgId"), workflow_id, { limit, before: decodeCursor(cursor) });
    return c.json(
      toPage(rows, limit, (r) => testRunView(r) as z.infer<typeof AgentTestRun>),
      200,
    );
  })
  .openapi(read, async (c) => {
    const { workflow_id, test_run_id } = c.req.valid("param");
    return c.json(testRunView(await getTestRun(getDb(c.env), c.get("orgId"), workflow_id, test_run_id)) as z.infer<typeof AgentTestRun>, 200);
  });
