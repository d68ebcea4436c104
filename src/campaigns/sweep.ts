// The cron's cleanup of abandoned imports. Create and redial write a hidden `creating` row and clean it up
// themselves on failure, but a Worker killed mid-import (CPU limit, eviction) leaves the row and the campaign
// object's storage behind. This removes both once the row is older than any import can be. A background import
// (visible as `importing`) is its object's own work and never swept.
import { and, asc, eq, lt } from "drizzle-orm";
import { campaigns } from "../db/schema";
import { getDb } from "../lib/db";
import { CREATING } from "./view";
import { campaignStub } from "./stub";
import { log } from "../lib/log";

/** Far beyond the longest import (cpu_ms caps a create at 5 minutes of CPU), so a live import is never swept. */
export const ABANDONED_IMPORT_AGE_MS = 60 * 60 * 1000;
/** Rows handled per run; any rest waits for the next run, so one run stays short. */
const SWEEP_BATCH = 100;

export type SweepResult = { removed: number[]; failed: number[] };

/** Discards the object and deletes the row of every `creating` campaign created before `now - ABANDONED_IMPORT_AGE_MS`. */
export async function sweepAbandonedImports(env: Env, now: number): Promise<SweepResult> {
  const db = getDb(env);
  // created_at is the same ISO-8601 UTC text as toISOString(), so text order is time order.
  const cutoff = new Date(now - ABANDONED_IMPORT_AGE_MS).toISOString();
  const rows = await db
    .select({ id: campaigns.id })
    .from(campaigns)
    .where(and(eq(campaigns.state, CREATING), lt(campaigns.createdAt, cutoff)))
    .orderBy(asc(campaigns.id))
    .limit(SWEEP_BATCH)
    .all();

  const result: SweepResult = { removed: [], failed: [] };
  for (const { id } of rows) {
    try {
      // The object first: if its discard fails the row stays, and the next run retries both.
      await campaignStub(env, id).discard();
      // Guarded on `creating` so a campaign that did become visible is never deleted.
      await db
        .delete(campaigns)
        .where(and(eq(campaigns.id, id), eq(campaigns.state, CREATING)))
        .run();
      result.removed.push(id);
    } catch (err) {
      // One failure must not block the rest.
      result.failed.push(id);
      log("error", "abandoned_import_sweep_failed", { campaign_id: id, error: String(err) });
    }
  }
  if (result.removed.length) {
    log("info", "abandoned_imports_swept", { campaign_ids: result.removed });
  }
  return result;
}
