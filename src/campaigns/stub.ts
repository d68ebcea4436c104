// The campaign object as the Worker's routes reach it: addressed by campaign id (calls/campaign/campaign-port.ts) and typed by
// the class's own method signatures (plain data over RPC; this also avoids the runtime's deep RPC type mapping). Its
// refusable methods answer a Result: callers unwrap it into the contract's HTTP error (errors.ts).
import { campaignObject } from "../calls/campaign/campaign-port";
import type { CampaignObject } from "./campaign-object";

/** The object's RPC methods (its methods that answer a promise; the runtime's own entry points left out). */
export type CampaignRpc = {
  [K in keyof CampaignObject as K extends "alarm" | "webSocketMessage" | "webSocketClose"
    ? never
    : CampaignObject[K] extends (...args: never[]) => Promise<unknown>
      ? K
      : never]: CampaignObject[K];
};

export function campaignStub(env: Env, campaignId: number): CampaignRpc {
  return campaignObject(env, campaignId) as unknown as CampaignRpc;
}
