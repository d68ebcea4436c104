// The agent latency summary from each run's stored figures (workflow_runs.latency, kept small in D1 when the run's
// results are saved) rather than from transcripts, which live in the runs' details objects: the endpoint reads one
// D1 column per run. The result is the same as summarizing the transcripts (the same values, nearest rank).
import { type AgentLatency, LATENCY_FIGURES, percentile } from "./latency";
import type { LatencySummary } from "./session/details-object";

export function summarizeRuns(workflowId: number, runs: ReadonlyArray<LatencySummary>): AgentLatency {
  let replies = 0;
  const figures = {} as AgentLatency["figures"];
  for (const run of runs) replies += run.replies;
  for (const f of LATENCY_FIGURES) {
    const sorted = runs.flatMap((r) => r.figures[f] ?? []).sort((a, b) => a - b);
    figures[f] = { count: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
  }
  return { workflow_id: workflowId, calls: runs.length, replies, figures };
}
