// Deleting a campaign that is not running: its contacts (the campaign's object), its stored files (the uploaded CSV
// and its calls' recordings in R2), then its row. The row goes last, so a failure part way leaves a campaign that a
// second DELETE finishes (each step can run again); its runs stay as the organization's call history.
import { and, eq, inArray, isNotNull, ne } from "drizzle-orm";
import { campaigns, workflowRuns } from "../db/schema";
import type { Db } from "../lib/db";
import { conflict } from "../lib/errors";
import type { CampaignRpc } from "./stub";

/** States a campaign can be deleted in: nothing is being dialed, and nothing will be. */
export const DELETABLE_STATES = new Set(["draft", "completed", "cancelled", "failed"]);

/** R2 deletes take at most this many keys at once. */
const R2_BATCH = 1000;

export async function deleteCampaign(env: Env, db: Db, orgId: number, c: { id: number; state: string; sourceId: string }, stub: CampaignRpc) {
  if (!DELETABLE_STATES.has(c.state)) {
    throw conflict(`Cannot delete a campaign that is ${c.state}; ${c.state === "importing" ? "wait for its import" : "cancel it first"}`);
  }
  const mine = and(eq(workflowRuns.campaignId, c.id), eq(workflowRuns.orgId, orgId));
  // A cancelled campaign lets its calls in progress finish: it goes once they have.
  const live = await db
    .select({ id: workflowRuns.id })
    .from(workflowRuns)
    .where(and(mine, inArray(workflowRuns.status, ["queued", "initiated", "ringing", "in_progress"])))
    .limit(1)
    .get();
  if (live) throw conflict("Calls of this campaign are still in progress; delete it once they have ended");
  await stub.discard();
  const recordings = await db
    .select({ id: workflowRuns.id, key: workflowRuns.recordingKey })
    .from(workflowRuns)
    .where(and(mine, isNotNull(workflowRuns.recordingKey)))
    .all();
  // The uploaded file, unless another campaign was made from it too (a redial child shares its parent's).
  const shared = await db
    .select({ id: campaigns.id })
    .from(campaigns)
    .where(and(eq(campaigns.orgId, orgId), eq(campaigns.sourceId, c.sourceId), ne(campaigns.id, c.id)))
    .limit(1)
    .get();
  const keys = [...(shared ? [] : [c.sourceId]), ...recordings.map((r) => r.key!)];
  for (let i = 0; i < keys.length; i += R2_BATCH) await env.UPLOADS.delete(keys.slice(i, i + R2_BATCH));
  await db.batch([
    // The files are gone: so are the runs' links to them.
    db
      .update(workflowRuns)
      .set({ recordingKey: null, recordingRate: null })
      .where(and(mine, isNotNull(workflowRuns.recordingKey))),
    // A redial child keeps its contacts; only its links to this campaign go (both directions).
    db
      .update(campaigns)
      .set({ parentCampaignId: null })
      .where(and(eq(campaigns.parentCampaignId, c.id), eq(campaigns.orgId, orgId))),
    db
      .update(campaigns)
      .set({ redialedCampaignId: null })
      .where(and(eq(campaigns.redialedCampaignId, c.id), eq(campaigns.orgId, orgId))),
    db.delete(campaigns).where(and(eq(campaigns.id, c.id), eq(campaigns.orgId, orgId))),
  ]);
  return { recordings: recordings.length, file: !shared };
}
