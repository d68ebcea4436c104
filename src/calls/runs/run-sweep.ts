// The cron's watchdog over call records: no run stays open. A run older than the longest call is hung up
// through its carrier (a lost hang-up or a carrier that ignores its own time limit must not bill for hours);
// a run still without a final status past that plus a grace period is ended `unknown` through applyStatus,
// which frees its organization lease and tells its campaign, exactly as a final callback would.
import { and, asc, inArray, lt } from "drizzle-orm";
import { workflowRuns } from "../../db/schema";
import { getDb } from "../../lib/db";
import { getProvider } from "../../telephony/providers/registry";
import { providerEnvOf } from "../../telephony/provisioning";
import { loadConfigContext } from "../../telephony/resolve";
import { getConfigWithNumbers } from "../../telephony/store";
import type { CallStatus } from "../../telephony/providers/types";
import { campaignCallIds } from "./campaign-call-ids";
import { applyStatus } from "./status";
import type { RunRow } from "./runs";
import { log } from "../../lib/log";

const OPEN: CallStatus[] = ["queued", "initiated", "ringing", "in_progress"];
/** Runs handled per cron run; any rest waits for the next run (every 15 minutes), so one run stays short. */
const SWEEP_BATCH = 100;

export const SWEEP_NOTE = "No final status from the carrier within max_call_seconds plus the grace period; ended by the watchdog";

export type RunSweepLimits = { maxCallSeconds: number; graceSeconds: number };
export type RunSweepResult = { hungUp: number[]; ended: number[]; failed: number[] };

async function hangUp(env: Env, run: RunRow, callId: string | null): Promise<void> {
  if (!callId || !run.provider || run.telephonyConfigurationId == null) return;
  const provider = getProvider(run.provider);
  if (!provider.calls) return;
  const { row, numbers } = await getConfigWithNumbers(getDb(env), run.orgId, run.telephonyConfigurationId);
  await provider.calls.hangup(await loadConfigContext(env, row, numbers), providerEnvOf(env), callId);
}

/** Hangs up every open run created before now − max_call_seconds; ends those past the grace as `unknown`. */
export async function sweepOverdueRuns(env: Env, now: number, limits: RunSweepLimits): Promise<RunSweepResult> {
  const db = getDb(env);
  // created_at is ISO-8601 UTC text, so text order is time order.
  const overdue = new Date(now - limits.maxCallSeconds * 1000).toISOString();
  const abandoned = new Date(now - (limits.maxCallSeconds + limits.graceSeconds) * 1000).toISOString();
  const rows = await db
    .select()
    .from(workflowRuns)
    .where(and(inArray(workflowRuns.status, OPEN), lt(workflowRuns.createdAt, overdue)))
    .orderBy(asc(workflowRuns.id))
    .limit(SWEEP_BATCH)
    .all();

  const result: RunSweepResult = { hungUp: [], ended: [], failed: [] };
  // A campaign call never answered has its call id in its campaign's object only.
  const campaignIds = await campaignCallIds(env, rows);
  for (const run of rows) {
    const callId = run.providerCallId ?? campaignIds.get(run.id) ?? null;
    try {
      try {
        await hangUp(env, run, callId);
        result.hungUp.push(run.id);
      } catch (err) {
        // A configuration deleted or a carrier down: the run is still ended below once past the grace.
        log("error", "watchdog_hangup_failed", { run_id: run.id, error: String(err) });
      }
      if (run.createdAt < abandoned) {
        const r = await applyStatus(env, run, { status: "unknown", error: SWEEP_NOTE, providerCallId: callId ?? undefined });
        if (r.applied) result.ended.push(run.id);
      }
    } catch (err) {
      // One failure must not block the rest.
      result.failed.push(run.id);
      log("error", "run_sweep_failed", { run_id: run.id, error: String(err) });
    }
  }
  return result;
}
