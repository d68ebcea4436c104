// The campaign object addressed by campaign id (idFromName(String(id))), typed by its class: every RPC method is
// async and returns plain data, so the class's own signatures describe the stub (and avoid deep RPC type mapping).
import type { CampaignObject } from "./campaign-object";
import { unwrapFaults } from "./engine/faults";

export type CampaignRpcAll = Pick<
  CampaignObject,
  | "initialize" | "importContacts" | "importPacked" | "finishImport" | "failSource" | "discard" | "snapshot" | "progress" | "logs"
  | "start" | "resume" | "pause" | "cancel" | "updateSettings" | "wake" | "onCallStatus"
  | "redialPlan" | "redialContacts" | "linkRedial"
>;

export function engineStub(env: Env, campaignId: number): CampaignRpcAll {
  return unwrapFaults(env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(campaignId)))) as unknown as CampaignRpcAll;
}
