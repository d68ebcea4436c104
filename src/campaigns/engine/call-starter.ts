// The seam between the engine and the calls module: the engine asks one function to start a call and does not care
// which carrier is behind it. Tests and benchmarks install a double with setCallStarter().
import type { CallStartResult, CampaignCallRequest } from "../object-api";

export type CallStarter = (env: Env, req: CampaignCallRequest) => Promise<CallStartResult>;

let override: CallStarter | null = null;
let registered: CallStarter | null = null;

/** Test support: replaces the real starter (null restores it). */
export function setCallStarter(fn: CallStarter | null): void {
  override = fn;
}

/** The calls module registers its entry point here (`startCampaignCall`). */
export function registerCallStarter(fn: CallStarter): void {
  registered = fn;
}

export async function startCampaignCallVia(env: Env, req: CampaignCallRequest): Promise<CallStartResult> {
  if (override) return override(env, req);
  // Loaded lazily: the calls module imports engine constants, so a static import here would be circular.
  if (!registered) registered = (await import("../../calls/start")).startCampaignCall;
  return registered(env, req);
}
