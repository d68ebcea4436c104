// Admission's engine side for every way a call starts (single, inbound, web, a campaign's dial): the agent's engine
// demand with the agent module's default models, the capacity object's lease under the call's organization lease id,
// and the 429 a refused caller gets. The rules are in src/capacity/ (docs/capacity.md).
import { WORKERS_AI_CHAT_MODEL } from "../../agent/workers-ai-model";
import { WORKERS_AI_STT_MODEL, WORKERS_AI_TTS_MODEL, WORKERS_AI_TURN_MODEL } from "../../agent/workers-ai-speech";
import { acquireEngines, demandOf, ENGINE_BUSY_MESSAGE, releaseEngines } from "../../capacity/admission";
import type { CapacityResult } from "../../capacity/capacity-api";
import { analysisEngine, type CallDemand, type DefaultModels } from "../../capacity/demand";
import { getDb } from "../../lib/db";
import { ApiError } from "../../lib/errors";
import { getWorkflow } from "../../workflows/store";

export const AGENT_DEFAULT_MODELS: DefaultModels = {
  llm: WORKERS_AI_CHAT_MODEL,
  stt: WORKERS_AI_STT_MODEL,
  tts: WORKERS_AI_TTS_MODEL,
  turn: WORKERS_AI_TURN_MODEL,
};

/** What one call of this agent holds of the engines on this deployment. */
export const callDemandOf = (env: Env, configurations: unknown): CallDemand => demandOf(env, configurations, AGENT_DEFAULT_MODELS);

/** A web call's: it always runs the conversation agent. */
export const webCallDemand = (env: Env, configurations: unknown): CallDemand => demandOf(env, configurations, AGENT_DEFAULT_MODELS, true);

/** The same for an agent by id (a campaign's); none when the agent is gone (its calls will not start either). */
export async function workflowDemand(env: Env, orgId: number, workflowId: number): Promise<CallDemand> {
  const wf = await getWorkflow(getDb(env), orgId, workflowId);
  return wf ? callDemandOf(env, wf.workflowConfigurations) : {};
}

/** The engine a post-call analysis of this agent asks. */
export const analysisEngineOf = (configurations: unknown) => analysisEngine(configurations, AGENT_DEFAULT_MODELS);

/** The engine lease of a single, inbound or web call, taken after its organization lease (same id). */
export function admitEngines(env: Env, orgId: number, leaseId: string, ttlSeconds: number, demand: CallDemand): Promise<CapacityResult> {
  return acquireEngines(env, { leaseId, orgId, ttlSeconds, demand });
}

/** 429 for a call refused for engine capacity: distinct from the concurrent-call limit, with when to ask again. */
export function engineBusy(result: CapacityResult): ApiError {
  return new ApiError(429, ENGINE_BUSY_MESSAGE, { "Retry-After": String(Math.max(1, result.retryAfterSeconds ?? 5)) });
}

/** Frees a call's engine lease beside its organization lease. */
export const releaseCallEngines = (env: Env, leaseId: string | null | undefined) => (leaseId ? releaseEngines(env, [leaseId]) : Promise.resolve());
