// run.completed: what a receiver learns about a call that reached its final status; run.analyzed: its analysis.
import type { workflowRuns } from "../db/schema";
import { emitSafely } from "./emit";

type Run = typeof workflowRuns.$inferSelect;

/** Which call an event is about: every run event starts with these. */
const runIdentity = (run: Run) => ({
  run_id: run.id,
  run_name: run.name,
  workflow_id: run.workflowId,
  workflow_uuid: run.workflowUuid,
  campaign_id: run.campaignId,
  phone_number: run.phoneNumber,
});

export function runCompletedData(run: Run): Record<string, unknown> {
  return {
    ...runIdentity(run),
    status: run.status,
    answered_by: run.answeredBy,
    error: run.error,
    started_at: run.startedAt,
    answered_at: run.answeredAt,
    ended_at: run.endedAt,
    duration_seconds: run.durationSeconds,
  };
}

/** Never throws: a webhook problem must not break status processing. */
// An agent test's call (is_test) is not a call of the organization's: its result is agent_test.finished, not these.
export const emitRunCompleted = async (env: Env, run: Run) => {
  if (!run.isTest) await emitSafely(env, run.orgId, "run.completed", runCompletedData(run));
};

/** run.analyzed: the run's post-call analysis (and the disposition it may have given). Never throws. */
export const emitRunAnalyzed = async (env: Env, run: Run, analysis: Record<string, unknown>) => {
  if (run.isTest) return;
  await emitSafely(env, run.orgId, "run.analyzed", { ...runIdentity(run), disposition: run.disposition, analysis });
};
