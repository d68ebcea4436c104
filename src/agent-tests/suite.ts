// Running an agent's suite (or one scenario) against its current version: every scenario × N repetitions as test
// calls, a few at a time, the results kept on the run's row (agent_test_runs) and told to webhooks
// (`agent_test.finished`). The newest finished run of a version is that version's test result (the gate's answer).
import { and, desc, eq, lt } from "drizzle-orm";
import { agentTestRuns } from "../db/schema";
import { isoNow } from "../lib/clock";
import type { Db } from "../lib/db";
import { getDb } from "../lib/db";
import { ApiError, notFound } from "../lib/errors";
import { log } from "../lib/log";
import { emitSafely } from "../webhooks/emit";
import { loadUsableWorkflow } from "../workflows/store";
import { scenarioResult, summarize, type ScenarioResult, type SuiteSummary } from "./results";
import { type TestModel, testModelFor } from "./models";
import { type CallerVoice, callerVoiceFor } from "./caller-speech";
import { getScenario, listScenarios, scenarioView } from "./store";
import { type Repetition, runRepetition } from "./test-call";

/**
 * Test calls at once. Test calls are not counted in the capacity ledger (offline they use no Workers AI engine; on the
 * agent's Workers AI model only its chat model, a few requests a call); the bound is the Worker's own: each call is a
 * session and a caller sending a frame every 20 ms.
 */
export const MAX_PARALLEL_CALLS = 6;

type RunRow = typeof agentTestRuns.$inferSelect;
export type SuiteResults = { summary: SuiteSummary | null; scenarios: ScenarioResult[] /** Why a run ended in error. */; error?: string };

export function testRunView(r: RunRow) {
  const results = r.results as SuiteResults | null;
  return {
    id: r.id,
    workflow_id: r.workflowId,
    version_number: r.versionNumber,
    scenario_id: r.scenarioId,
    repetitions: r.repetitions,
    status: r.status,
    created_at: r.createdAt,
    finished_at: r.finishedAt,
    summary: results?.summary ?? null,
    scenarios: results?.scenarios ?? [],
    ...(results?.error ? { error: results.error } : {}),
  };
}

/** Runs `jobs` with at most `limit` at once, results in order. */
async function pooled<T>(jobs: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return out;
}

/** What a test run's object carries out: the run's row, what it runs, and the model given in the request. */
export type RunJob = {
  testRunId: number;
  orgId: number;
  workflowId: number;
  versionNumber: number;
  scenarioIds: number[];
  scenarioId: number | null;
  repetitions: number;
  keyId: number | null;
  model: TestModel | null;
  /** The caller's real voice given in the request (absent in jobs made before it existed). */
  callerVoice?: CallerVoice | null;
};

/**
 * A new run of the agent's suite (or one scenario) against its current version: checked here (the agent, its
 * scenarios, the model's endpoint: any refusal is the request's 4xx), its row made `running`, and the job its own
 * object (run-object.ts) carries out whether or not the client waits.
 */
export async function newRun(
  env: Env,
  orgId: number,
  workflowId: number,
  opts: { scenarioId?: number | null; repetitions: number; keyId?: number | null; model?: TestModel | null; callerVoice?: CallerVoice | null },
): Promise<{ run: RunRow; job: RunJob }> {
  const db = getDb(env);
  const agent = await loadUsableWorkflow(db, orgId, workflowId);
  const rows = opts.scenarioId ? [await getScenario(db, orgId, workflowId, opts.scenarioId)] : await listScenarios(db, orgId, workflowId);
  if (!rows.length) throw notFound("Test scenario");
  await testModelFor(env, agent, opts.model);
  callerVoiceFor(env, agent, opts.callerVoice);
  const run = await db
    .insert(agentTestRuns)
    .values({ orgId, workflowId, versionNumber: agent.versionNumber, scenarioId: opts.scenarioId ?? null, repetitions: opts.repetitions })
    .returning()
    .get();
  const job: RunJob = {
    testRunId: run.id,
    orgId,
    workflowId,
    versionNumber: agent.versionNumber,
    scenarioIds: rows.map((r) => r.id),
    scenarioId: opts.scenarioId ?? null,
    repetitions: opts.repetitions,
    keyId: opts.keyId ?? null,
    model: opts.model ?? null,
    callerVoice: opts.callerVoice ?? null,
  };
  return { run, job };
}

/** Ends a run that could not finish: `error`, its reason on the results, told to webhooks like any finished run. */
export async function endRunInError(env: Env, job: RunJob, reason: string): Promise<void> {
  await settleRun(env, job, "error", { summary: null, scenarios: [], error: reason });
}

/** A running run's end on its row (a run already ended keeps its end), then told to webhooks. */
async function settleRun(
  env: Env,
  job: RunJob,
  status: string,
  results: { summary: ReturnType<typeof summarize> | null; scenarios: unknown[]; error?: string },
): Promise<void> {
  await getDb(env)
    .update(agentTestRuns)
    .set({ status, results, finishedAt: isoNow() })
    .where(and(eq(agentTestRuns.id, job.testRunId), eq(agentTestRuns.status, "running")))
    .run();
  await emitSafely(env, job.orgId, "agent_test.finished", {
    test_run_id: job.testRunId,
    workflow_id: job.workflowId,
    version_number: job.versionNumber,
    scenario_id: job.scenarioId,
    status,
    summary: results.summary,
  });
}

/** Every scenario × repetitions as test calls, a few at a time; the results on the run's row and to webhooks. */
export async function carryRun(env: Env, job: RunJob): Promise<void> {
  const db = getDb(env);
  const agent = await loadUsableWorkflow(db, job.orgId, job.workflowId);
  if (agent.versionNumber !== job.versionNumber)
    return endRunInError(env, job, `The agent changed (now version ${agent.versionNumber}) before the calls began: run it again`);
  const all = await listScenarios(db, job.orgId, job.workflowId);
  const scenarios = all.filter((r) => job.scenarioIds.includes(r.id)).map(scenarioView);
  if (!scenarios.length) return endRunInError(env, job, "The run's scenarios were deleted before the calls began");
  const model = await testModelFor(env, agent, job.model);
  let callerVoice: CallerVoice | null;
  try {
    callerVoice = callerVoiceFor(env, agent, job.callerVoice);
  } catch (err) {
    // The binding went away or the agent's setting changed since the request (which checked both).
    const detail = err instanceof ApiError && Array.isArray(err.detail) ? err.detail[0]?.msg : null;
    return endRunInError(env, job, detail ?? String((err as Error)?.message ?? err));
  }
  const jobs = scenarios.flatMap((s) =>
    Array.from({ length: job.repetitions }, (_, i) => async (): Promise<Repetition> => {
      try {
        return await runRepetition(env, agent, s, i + 1, { keyId: job.keyId, model, callerVoice });
      } catch (err) {
        log("error", "agent_test_call_failed", { test_run_id: job.testRunId, scenario_id: s.id, error: String(err) });
        return { repetition: i + 1, run_id: null, passed: false, verdicts: [], caller: [], transcript: [], error: "The test call failed unexpectedly" };
      }
    }),
  );
  const reps = await pooled(jobs, MAX_PARALLEL_CALLS);
  const results = scenarios.map((s, k) => scenarioResult(s, reps.slice(k * job.repetitions, (k + 1) * job.repetitions)));
  const summary = summarize(results);
  await settleRun(env, job, summary.status, { summary, scenarios: results });
}

export async function getTestRun(db: Db, orgId: number, workflowId: number, id: number): Promise<RunRow> {
  const row = await db
    .select()
    .from(agentTestRuns)
    .where(and(eq(agentTestRuns.id, id), eq(agentTestRuns.orgId, orgId), eq(agentTestRuns.workflowId, workflowId)))
    .get();
  if (!row) throw notFound("Test run");
  return row;
}

export async function listTestRuns(db: Db, orgId: number, workflowId: number, opts: { limit: number; before: number | null }): Promise<RunRow[]> {
  return db
    .select()
    .from(agentTestRuns)
    .where(and(eq(agentTestRuns.orgId, orgId), eq(agentTestRuns.workflowId, workflowId), opts.before ? lt(agentTestRuns.id, opts.before) : undefined))
    .orderBy(desc(agentTestRuns.id))
    .limit(opts.limit + 1)
    .all();
}
