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

export function startCampaignCallVia(env: Env, req: CampaignCallRequest): Promise<CallStartResult> {
  const fn = override ?? registered;
  if (!fn) {
    // Nothing was asked of any carrier: the engine treats this like a configuration problem and pauses.
    return Promise.resolve({ ok: false, runId: null, kind: "config", message: "The calls module is not available" });
  }
  return fn(env, req);
}
