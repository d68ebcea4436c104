// The seam between the engine and the calls module: the engine asks one function to start a call and does not care
// which carrier is behind it. Tests and benchmarks install a double with setCallStarter().
import type { CallStartResult, CampaignCallRequest } from "../../calls/campaign/campaign-calls";
import { startCampaignCall } from "../../calls/start/start";

export type CallStarter = (env: Env, req: CampaignCallRequest) => Promise<CallStartResult>;

let override: CallStarter | null = null;

/** Test support: replaces the real starter (null restores it). */
export function setCallStarter(fn: CallStarter | null): void {
  override = fn;
}

export function startCampaignCallVia(env: Env, req: CampaignCallRequest): Promise<CallStartResult> {
  return (override ?? startCampaignCall)(env, req);
}
