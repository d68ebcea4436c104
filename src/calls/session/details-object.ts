// A run's bulk as one object in the uploads bucket (`runs/<org>/<run>.json`, named by workflow_runs.details_key):
// the transcript with each reply's timing, the agent's tool calls and the post-call analysis. D1 keeps the index
// (status, times, disposition, usage's four numbers, gathered values, a latency summary): lists, filters, CSVs and
// the latency endpoint read only D1, the run detail endpoint reads the one object. The stored values are exactly
// what the old D1 columns held, so the API's JSON is the same byte for byte.
import type { StoredTurn } from "../../db/schema";
import { type LatencyColumn, latencyColumn } from "./latency-record";

export type { StoredTurn };

export type RunDetailsObject = {
  transcript: StoredTurn[] | null;
  tool_calls: Array<Record<string, unknown>> | null;
  analysis: Record<string, unknown> | null;
  /** The graph's nodes the call went through, in order (absent on objects written before it was kept). */
  nodes?: string[] | null;
  /** The recording was measured for the gaps the caller heard (src/calls/after-call/heard-latency.ts): once per run. */
  heard?: HeardMeasurement;
  /** Who answered, as the agent judged it (answering-machine detection): class, reason, evidence, time to decide. */
  amd?: Record<string, unknown> | null;
};

/** What the measuring of the recording found: its exchanges (caller's voice, then the agent's) and replies matched. */
export type HeardMeasurement = { measured_at: string; exchanges: number; matched: number };

/** Each reply's timing figures, compact (the latency endpoint's input, small enough for the run's row). */
export type LatencySummary = LatencyColumn;

export const detailsKeyOf = (orgId: number, runId: number) => `runs/${orgId}/${runId}.json`;

export async function writeDetails(bucket: R2Bucket, key: string, details: RunDetailsObject): Promise<void> {
  await bucket.put(key, JSON.stringify(details), { httpMetadata: { contentType: "application/json" } });
}

/** The object, or null where it is missing (deleted by retention, or never written). */
export async function readDetails(bucket: R2Bucket, key: string): Promise<RunDetailsObject | null> {
  const object = await bucket.get(key);
  if (!object) return null;
  const parsed = (await object.json()) as Partial<RunDetailsObject>;
  return {
    transcript: parsed.transcript ?? null,
    tool_calls: parsed.tool_calls ?? null,
    analysis: parsed.analysis ?? null,
    ...(parsed.nodes ? { nodes: parsed.nodes } : {}),
    ...(parsed.heard ? { heard: parsed.heard } : {}),
    ...(parsed.amd ? { amd: parsed.amd } : {}),
  };
}

/** The run's latency column from its transcript: bounded whatever the call's length (latency-record.ts); null: none. */
export const latencySummary = latencyColumn;
