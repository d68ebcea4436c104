// What admission asks of the capacity object: a call's engine demand (none when the deployment's calls run no
// engines), its lease under the same id as its organization lease, the release beside the organization's, and a
// token for post-call analysis. Failures to reach the object never refuse a call: the budget is a guard against
// losing calls mid-conversation, and an unreachable object must not stop every call of the deployment.
import { log } from "../lib/log";
import type { CapacityResult, TokenResult } from "./capacity-api";
import { callDemand, type CallDemand, type DefaultModels } from "./demand";
import { capacityStub } from "./engine-capacity-object";

let liveOverride: boolean | null = null;

/**
 * Test support: count the agents' engines as if the deployment ran the conversation agent (true), never (false),
 * or as its VOICE_AGENT says (null). The suites run with VOICE_AGENT empty and prepare each call's agent.
 */
export function setEnginesLive(on: boolean | null): void {
  liveOverride = on;
}

/**
 * Whether calls use their agents' engines: only the conversation agent talks to them (VOICE_AGENT), and Workers AI
 * only with an AI binding that reaches it (local development runs offline engines instead).
 */
function enginesLive(env: Env, conversation: boolean): { any: boolean; workersAi: boolean } {
  if (liveOverride != null) return { any: liveOverride, workersAi: liveOverride };
  const e = env as { VOICE_AGENT?: string; AI?: unknown; OFFLINE_ENGINES?: string };
  const any = conversation || e.VOICE_AGENT?.trim() === "conversation";
  return { any, workersAi: any && !!e.AI && e.OFFLINE_ENGINES !== "true" };
}

/**
 * What one call of an agent with these configurations holds of the engines, as this deployment runs calls.
 * `conversation`: the call runs the conversation agent whatever VOICE_AGENT says (a web call).
 */
export function demandOf(env: Env, configurations: unknown, defaults: DefaultModels, conversation = false): CallDemand {
  const live = enginesLive(env, conversation);
  if (!live.any) return {};
  const demand = callDemand(configurations, defaults);
  if (!live.workersAi) for (const key of Object.keys(demand)) if (key.startsWith("workers-ai:")) delete demand[key];
  return demand;
}

export const hasDemand = (d: CallDemand) => Object.keys(d).length > 0;

/** Refused with the engine that had no room, or granted (also when the object could not be asked). */
export async function acquireEngines(env: Env, req: { leaseId: string; orgId: number; ttlSeconds: number; demand: CallDemand }): Promise<CapacityResult> {
  if (!hasDemand(req.demand)) return { granted: true };
  try {
    return (await capacityStub(env).acquireMany([req]))[0];
  } catch (err) {
    log("error", "engine_capacity_unreachable", { lease_id: req.leaseId, error: String(err) });
    return { granted: true };
  }
}

/**
 * Frees a call's engine lease: called wherever its organization lease is freed (the same id). Unknown ids are fine,
 * and a failure only holds the room until the lease's TTL.
 */
export async function releaseEngines(env: Env, leaseIds: string[]): Promise<void> {
  if (!leaseIds.length) return;
  try {
    await capacityStub(env).releaseMany(leaseIds);
  } catch (err) {
    log("warning", "engine_release_failed", { lease_ids: leaseIds, error: String(err) });
  }
}

/** A token for one request outside a call (post-call analysis) to `engine`; ok when the object cannot be asked. */
export async function takeEngineToken(env: Env, engine: string): Promise<TokenResult> {
  try {
    return await capacityStub(env).takeToken(engine);
  } catch (err) {
    log("warning", "engine_capacity_unreachable", { engine, error: String(err) });
    return { ok: true, retryAfterSeconds: 0 };
  }
}

/**
 * The token a post-call analysis takes before it asks its model (`engine`, null for a scripted one). Only Workers AI
 * spends the deployment's budget that live turns share: a bring-your-own-key endpoint (the organization's own
 * account) or a scripted model takes none, nor does a deployment whose calls reach no Workers AI.
 */
export async function takeAnalysisToken(env: Env, engine: string | null): Promise<TokenResult> {
  if (!engine?.startsWith("workers-ai:") || !enginesLive(env, true).workersAi) return { ok: true, retryAfterSeconds: 0 };
  return takeEngineToken(env, engine);
}

/** The message of a refusal, distinct from the organization's concurrent-call cap. */
export const ENGINE_BUSY_MESSAGE = "Engine capacity reached: the deployment's AI engines are fully used by calls in progress";
