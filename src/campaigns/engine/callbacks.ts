// A callee who asked to be called back: the disposition `call_back_later` with the time they asked for (found by the
// post-call analysis) turns the contact's answered call into a retry due then. It counts against `max_retries` like
// any retry and needs retries enabled; the retry waits for the calling window as every retry does, so a time inside
// the schedule is called then and one outside it at the window's next opening.
import type { RunOutcome } from "../../calls/campaign/campaign-calls";
import type { CampaignCore } from "./core";
import type { RetryConfig } from "./settings";
import { contactLabel } from "./row-label";

export const CALL_BACK_LATER = "call_back_later";
/** A callback further ahead than this is not scheduled (a misheard date, a year's typo). */
export const MAX_CALLBACK_AHEAD_MS = 30 * 24 * 3600 * 1000;

/** When the callback is due, or why there is none (pure). A time already past is due now. */
export function callbackDue(callbackAt: string, attemptsMade: number, cfg: RetryConfig, nowMs: number): { due: number } | { refused: string } {
  const at = Date.parse(callbackAt);
  if (!Number.isFinite(at)) return { refused: `'${callbackAt}' is not a time` };
  if (!cfg.enabled) return { refused: "retries are disabled" };
  if (attemptsMade - 1 >= cfg.max_retries) return { refused: `the contact had its ${cfg.max_retries} retries` };
  if (at - nowMs > MAX_CALLBACK_AHEAD_MS) return { refused: "the time is more than 30 days ahead" };
  return { due: Math.max(at, nowMs) };
}

/** Schedules the callback a run's outcome asks for (once per attempt); true when it did. */
export function scheduleCallback(core: CampaignCore, o: RunOutcome, nowMs: number): boolean {
  if (o.disposition !== CALL_BACK_LATER || !o.callbackAt) return false;
  const c = core.campaign();
  const { db, log } = core;
  const a = db.one<{ id: number; run_id: number | null }>`SELECT id, run_id FROM attempts WHERE contact_id = ${o.contactId} AND attempt = ${o.attempt}`;
  if (!c || !a || (a.run_id != null && a.run_id !== o.runId)) return false;
  // Only the contact's latest attempt decides what happens next; a repeat finds its retry already set.
  const latest = db.value<number>`SELECT max(attempt) FROM attempts WHERE contact_id = ${o.contactId}`;
  const row = db.value<number>`SELECT row FROM contacts WHERE id = ${o.contactId}`;
  const details = { row, contact_id: o.contactId, attempt: o.attempt, run_id: o.runId, callback_at: o.callbackAt };
  if (latest !== o.attempt || db.one`SELECT 1 AS x FROM timers WHERE kind = 'retry' AND ref = ${o.contactId}`) return false;
  const verdict = callbackDue(o.callbackAt, o.attempt, core.settings(c).retry_config, nowMs);
  const live = c.state === "running" || c.state === "paused";
  if (!live || "refused" in verdict) {
    const why = "refused" in verdict ? verdict.refused : `the campaign is ${c.state}`;
    log.write(
      "warning",
      "callback_not_scheduled",
      `${contactLabel(o.contactId, row)}: the callee asked to be called back at ${o.callbackAt}, but ${why}`,
      details,
    );
    return false;
  }
  // The attempt may still be open (its final status not yet in): the contact then stays waiting when it ends.
  const n = db.run`UPDATE contacts SET status = 'waiting' WHERE id = ${o.contactId} AND status IN ('done', 'active')`;
  if (!n) return false;
  core.timers.set("retry", o.contactId, verdict.due);
  core.markDirty();
  log.write(
    "info",
    "callback_scheduled",
    `${contactLabel(o.contactId, row)}: called back at ${new Date(verdict.due).toISOString()}, as the callee asked`,
    details,
  );
  return true;
}
