// campaign.state_changed (every move between visible states) and campaign.completed (the move to completed).
import { emitSafely } from "./emit";

/** Never throws. `from` is the state D1 showed before; the hidden mid-create state is not an event. */
export async function emitCampaignStateChange(env: Env, orgId: number, campaignId: number, from: string, to: string): Promise<void> {
  if (from === to || from === "creating") return;
  await emitSafely(env, orgId, "campaign.state_changed", { campaign_id: campaignId, from_state: from, state: to });
  if (to === "completed") await emitSafely(env, orgId, "campaign.completed", { campaign_id: campaignId, state: to });
}
