// A campaign's call records the carrier's call id in D1 only with its answer or its final status (startCampaignCall
// writes nothing when the carrier accepts it); until then its campaign's object has it. Reads that show a run or hang
// one up fill it in from there: one call per campaign.
import { campaignPort } from "../campaign/campaign-port";
import { type RunRow, isFinal } from "./runs";
import { log } from "../../lib/log";

const asksCampaign = (r: RunRow) => r.providerCallId == null && r.campaignId != null && r.contactId != null && r.attempt != null && !isFinal(r.status);

/** The call ids their campaigns know of these runs' (by run id); a campaign that cannot answer adds none. */
export async function campaignCallIds(env: Env, rows: RunRow[]): Promise<Map<number, string>> {
  const byCampaign = new Map<number, RunRow[]>();
  for (const r of rows) {
    if (!asksCampaign(r)) continue;
    const list = byCampaign.get(r.campaignId!) ?? [];
    byCampaign.set(r.campaignId!, list);
    list.push(r);
  }
  const known = new Map<number, string>();
  await Promise.all(
    [...byCampaign].map(async ([campaignId, runs]) => {
      try {
        const ids = await campaignPort(env, campaignId).callIdsOf(runs.map((r) => ({ runId: r.id, contactId: r.contactId!, attempt: r.attempt! })));
        for (const [runId, callId] of Object.entries(ids)) known.set(Number(runId), callId);
      } catch (err) {
        log("error", "campaign_call_ids_failed", { campaign_id: campaignId, error: String(err) });
      }
    }),
  );
  return known;
}

/** The runs as shown: each with its call id, D1's or its campaign's. */
export async function withCampaignCallIds(env: Env, rows: RunRow[]): Promise<RunRow[]> {
  const known = await campaignCallIds(env, rows);
  return known.size ? rows.map((r) => (known.has(r.id) ? { ...r, providerCallId: known.get(r.id)! } : r)) : rows;
}
