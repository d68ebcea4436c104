// How the calls module reaches a campaign's object: one typed port. Calls never import campaigns (the direction runs
// campaigns -> calls), so the port is declared here and the campaign object implements it. Calls tell a campaign its
// calls' statuses and the agent's dispositions, and ask it for the carrier's call ids it alone holds.
import type { CampaignCallRef, CampaignCallStatus, RunOutcome } from "./campaign-calls";

export interface CampaignPort {
  /** Statuses of several of the campaign's calls, in the order they arrived; each answers whether it changed anything. */
  onCallStatuses(batch: CampaignCallStatus[]): Promise<{ applied: boolean }[]>;
  /** The carrier's call ids the campaign holds for these calls, by run id (those it knows). */
  callIdsOf(calls: CampaignCallRef[]): Promise<Record<number, string>>;
  /** A call's session ended with the agent's disposition (idempotent). */
  onRunOutcome(o: RunOutcome): Promise<{ applied: boolean }>;
}

/** The campaign's object: one per campaign, addressed by its id (the one place that knows how). */
export function campaignObject(env: Env, campaignId: number) {
  return env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(campaignId)));
}

/** The campaign as the calls module may use it. */
export function campaignPort(env: Env, campaignId: number): CampaignPort {
  return campaignObject(env, campaignId);
}
