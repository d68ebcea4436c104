// The retention purge's decisions, pure (time and rows passed in): which organizations are due, what each expired run
// loses, and where a batch stops so the next cron tick resumes there. privacy/purge.ts reads and deletes.
import { RETENTION_KINDS, type RetentionDays } from "../workflows/retention";

export const DAY_MS = 86_400_000;

/**
 * A purge is daily: an organization is due again this long after its last complete pass. A little under a day, so
 * the 15-minute cron does not drift a tick later every day.
 */
export const PURGE_INTERVAL_MS = DAY_MS - 20 * 60_000;

/** The agent's retention over the organization's: a kind the agent leaves null follows the organization. */
export function effectiveRetention(org: RetentionDays, agent: RetentionDays): RetentionDays {
  return {
    recordings_days: agent.recordings_days ?? org.recordings_days,
    transcripts_days: agent.transcripts_days ?? org.transcripts_days,
    runs_days: agent.runs_days ?? org.runs_days,
  };
}

export const keepsForever = (r: RetentionDays) => RETENTION_KINDS.every((k) => r[k] == null);

/** The last purge of an organization, as its audit entry says (null: never purged). */
export type LastPurge = { at: number; complete: boolean } | null;

/** Whether an organization with a retention policy is purged on this tick: never yet, unfinished, or a day on. */
export const purgeDue = (last: LastPurge, now: number): boolean => last === null || !last.complete || now - last.at >= PURGE_INTERVAL_MS;

/** A run as the purge reads it (workflow_runs, by the (workflow_id, id) index). */
export type PurgeRow = {
  id: number;
  createdAt: string;
  final: boolean;
  recordingKey: string | null;
  detailsKey: string | null;
  /** Any of the legacy bulk columns (transcript, tool_calls, analysis, gathered_context) still set. */
  hasBulk: boolean;
};

export type PurgeCounts = { recordings: number; transcripts: number; runs: number };

export type PurgePlan = {
  /** Runs deleted with everything they hold. */
  deleteRuns: number[];
  /** Runs that lose their details object and bulk columns. */
  dropDetails: number[];
  /** Runs that lose their recording. */
  dropRecordings: number[];
  /** R2 objects to delete before the rows change. */
  keys: string[];
  /** The last run looked at; the next page starts after it. */
  lastId: number;
  /** No older run is left in this agent (a young run was reached, or the page was the last). */
  done: boolean;
};

/** The instants before which each kind expired (null: kept forever). */
export function cutoffs(r: RetentionDays, now: number): Record<"recordings" | "transcripts" | "runs", number | null> {
  const at = (days: number | null) => (days == null ? null : now - days * DAY_MS);
  return { recordings: at(r.recordings_days), transcripts: at(r.transcripts_days), runs: at(r.runs_days) };
}

/**
 * What to do with one page of an agent's runs (in id order, which is creation order): runs older than a kind's
 * cutoff lose that kind; only final runs are touched (a live call's run keeps everything until it ends). Stops at the
 * first run younger than every cutoff (nothing after it can have expired), or before a run whose objects would take
 * the R2 deletes past `keyBudget`.
 */
export function planPage(rows: PurgeRow[], r: RetentionDays, now: number, keyBudget: number, afterId: number, lastPage: boolean): PurgePlan {
  const cut = cutoffs(r, now);
  const oldest = Math.max(...[cut.recordings, cut.transcripts, cut.runs].map((c) => c ?? Number.NEGATIVE_INFINITY));
  const plan: PurgePlan = { deleteRuns: [], dropDetails: [], dropRecordings: [], keys: [], lastId: afterId, done: lastPage };
  for (const row of rows) {
    const created = Date.parse(row.createdAt);
    if (!(created < oldest)) return { ...plan, done: true };
    const expired = (c: number | null) => c != null && created < c;
    let keys: string[] = [];
    let action: "run" | "details" | "recording" | "details+recording" | null = null;
    if (row.final && expired(cut.runs)) {
      keys = [row.recordingKey, row.detailsKey].filter((k): k is string => k != null);
      action = "run";
    } else if (row.final) {
      const details = expired(cut.transcripts) && (row.detailsKey != null || row.hasBulk);
      const recording = expired(cut.recordings) && row.recordingKey != null;
      if (details && row.detailsKey) keys.push(row.detailsKey);
      if (recording && row.recordingKey) keys.push(row.recordingKey);
      action = details && recording ? "details+recording" : details ? "details" : recording ? "recording" : null;
    }
    if (plan.keys.length + keys.length > keyBudget) return { ...plan, done: false };
    plan.keys.push(...keys);
    if (action === "run") plan.deleteRuns.push(row.id);
    if (action === "details" || action === "details+recording") plan.dropDetails.push(row.id);
    if (action === "recording" || action === "details+recording") plan.dropRecordings.push(row.id);
    plan.lastId = row.id;
  }
  return plan;
}

export const countsOf = (p: PurgePlan): PurgeCounts => ({ recordings: p.dropRecordings.length, transcripts: p.dropDetails.length, runs: p.deleteRuns.length });

export const addCounts = (a: PurgeCounts, b: PurgeCounts): PurgeCounts => ({
  recordings: a.recordings + b.recordings,
  transcripts: a.transcripts + b.transcripts,
  runs: a.runs + b.runs,
});
