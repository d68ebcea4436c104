// A run's details object (src/calls/session/details-object.ts) as the calls module reads and keeps it: the run row
// with its bulk filled in (from the object, or from the old D1 columns on a row not yet moved), the analysis added
// to the object, and rows from before the move migrated (lazily when one is read, and a bounded batch on the cron):
// the object is written first, then the row names it and its old columns are nulled, in one conditional write.
import { and, eq, isNotNull, isNull, or } from "drizzle-orm";
import { workflowRuns } from "../../db/schema";
import { getDb } from "../../lib/db";
import { log } from "../../lib/log";
import type { RunRow, RunWithDetails } from "./runs";
import { detailsKeyOf, latencySummary, readDetails, type RunDetailsObject, writeDetails } from "../session/details-object";

/** How many old rows one cron run moves (each one object put and one D1 write). */
export const MIGRATE_BATCH = 50;

const hasBulk = (r: RunRow) => r.transcript != null || r.toolCalls != null || r.analysis != null;

/** The row with its transcript, tool calls, analysis and answering-machine verdict, wherever they are kept. */
export async function withDetails(env: Env, row: RunRow): Promise<RunWithDetails> {
  if (!row.detailsKey) return row;
  const d = await readDetails(env.UPLOADS, row.detailsKey);
  if (!d) return row;
  return { ...row, transcript: d.transcript as RunRow["transcript"], toolCalls: d.tool_calls, analysis: d.analysis, amd: d.amd ?? null };
}

/**
 * Moves an old row's bulk into its object (idempotent: the same object, and the row changes only while it names
 * none). Returns the row as it now is in D1 terms (bulk columns null, details_key set), or the row unchanged when
 * there is nothing to move or the move failed (the next read or cron tries again).
 */
export async function migrateRun(env: Env, row: RunRow): Promise<RunRow> {
  if (row.detailsKey || !hasBulk(row)) return row;
  const key = detailsKeyOf(row.orgId, row.id);
  const details: RunDetailsObject = { transcript: row.transcript ?? null, tool_calls: row.toolCalls ?? null, analysis: row.analysis ?? null };
  try {
    await writeDetails(env.UPLOADS, key, details);
    const status = typeof row.analysis?.status === "string" ? row.analysis.status : null;
    const moved = await getDb(env)
      .update(workflowRuns)
      .set({
        detailsKey: key,
        latency: row.latency ?? latencySummary(row.transcript),
        analysisStatus: row.analysisStatus ?? status,
        transcript: null,
        toolCalls: null,
        analysis: null,
      })
      .where(and(eq(workflowRuns.id, row.id), isNull(workflowRuns.detailsKey)))
      .returning()
      .get();
    return moved ?? row;
  } catch (err) {
    log("error", "run_details_migration_failed", { run_id: row.id, error: String(err) });
    return row;
  }
}

/** One bounded batch of old rows moved (the cron's); how many were. */
export async function migrateRunDetails(env: Env, limit = MIGRATE_BATCH): Promise<number> {
  const rows = await getDb(env)
    .select()
    .from(workflowRuns)
    .where(and(isNull(workflowRuns.detailsKey), or(isNotNull(workflowRuns.transcript), isNotNull(workflowRuns.toolCalls), isNotNull(workflowRuns.analysis))))
    .limit(limit)
    .all();
  let moved = 0;
  for (const row of rows) if ((await migrateRun(env, row)).detailsKey) moved++;
  return moved;
}

/** The analysis into the run's details object (after the row claimed it); false where the run keeps no object. */
export async function storeAnalysis(env: Env, row: RunRow, analysis: Record<string, unknown>): Promise<boolean> {
  if (!row.detailsKey) return false;
  const d = (await readDetails(env.UPLOADS, row.detailsKey)) ?? { transcript: null, tool_calls: null, analysis: null };
  await writeDetails(env.UPLOADS, row.detailsKey, { ...d, analysis });
  return true;
}
