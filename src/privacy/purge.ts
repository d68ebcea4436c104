// The retention purge, run by the cron (src/index.ts) every tick: each organization with a retention policy (its own
// or an agent's) is purged once a day, in bounded batches that resume on the next tick, and each pass leaves one
// audit entry with the counts it removed. The decisions are purge-plan.ts's; this module reads and deletes.
import { sql } from "drizzle-orm";
import { auditStatement } from "../lib/audit";
import { getDb } from "../lib/db";
import { log } from "../lib/log";
import { FINAL_STATUSES } from "../calls/runs/runs";
import { retentionDays, type RetentionDays } from "../workflows/retention";
import {
  addCounts,
  countsOf,
  effectiveRetention,
  keepsForever,
  planPage,
  purgeDue,
  type LastPurge,
  type PurgeCounts,
  type PurgePlan,
  type PurgeRow,
} from "./purge-plan";

/** Limits of one cron invocation (Workers allow ~1000 subrequests; an R2 delete takes up to 1000 keys per call). */
export const purgeLimits = {
  /** R2 objects deleted per invocation at most. */
  keys: 300,
  /** Runs read per invocation at most (D1 bills rows read). */
  rows: 5000,
  /** Runs read per query. */
  page: 200,
};

const FINAL = JSON.stringify([...FINAL_STATUSES]);

type Budget = { keys: number; rows: number };

/** Organizations with a retention policy, with their last purge (one query). */
async function candidates(env: Env): Promise<{ orgId: number; last: LastPurge }[]> {
  const { results } = await env.DB.prepare(
    `WITH orgs AS (
       SELECT org_id FROM calling_policies WHERE retention IS NOT NULL
       UNION SELECT org_id FROM workflows WHERE json_type(workflow_configurations, '$.retention') = 'object'
     )
     SELECT o.org_id AS org_id, a.created_at AS at, a.summary ->> '$.complete' AS complete
     FROM orgs o LEFT JOIN audit_log a ON a.id = (
       SELECT id FROM audit_log WHERE org_id = o.org_id AND action = 'purge' ORDER BY id DESC LIMIT 1
     )
     ORDER BY o.org_id`,
  ).all<{ org_id: number; at: string | null; complete: number | null }>();
  return results.map((r) => ({ orgId: r.org_id, last: r.at ? { at: Date.parse(r.at), complete: r.complete === 1 } : null }));
}

/** The organization's agents with their effective retention, those that keep everything forever left out. */
async function agentsOf(env: Env, orgId: number): Promise<{ workflowId: number; retention: RetentionDays }[]> {
  const [policy, agents] = await env.DB.batch<{ retention?: string | null; id?: number }>([
    env.DB.prepare("SELECT retention FROM calling_policies WHERE org_id = ?").bind(orgId),
    env.DB.prepare("SELECT id, workflow_configurations -> '$.retention' AS retention FROM workflows WHERE org_id = ? ORDER BY id").bind(orgId),
  ]);
  const orgRetention = retentionDays(parse(policy.results[0]?.retention));
  return agents.results
    .map((a) => ({ workflowId: a.id as number, retention: effectiveRetention(orgRetention, retentionDays(parse(a.retention))) }))
    .filter((a) => !keepsForever(a.retention));
}

function parse(json: string | null | undefined): Record<string, unknown> | null {
  if (!json) return null;
  try {
    const v = JSON.parse(json);
    return v && typeof v === "object" ? v : null;
  } catch {
    return null;
  }
}

async function readPage(env: Env, workflowId: number, afterId: number, limit: number): Promise<PurgeRow[]> {
  const { results } = await env.DB.prepare(
    `SELECT id, created_at, status IN (SELECT value FROM json_each(?)) AS final, recording_key, details_key,
       (transcript IS NOT NULL OR tool_calls IS NOT NULL OR analysis IS NOT NULL OR gathered_context IS NOT NULL) AS bulk
     FROM workflow_runs WHERE workflow_id = ? AND id > ? ORDER BY id LIMIT ?`,
  )
    .bind(FINAL, workflowId, afterId, limit)
    .all<{ id: number; created_at: string; final: number; recording_key: string | null; details_key: string | null; bulk: number }>();
  return results.map((r) => ({
    id: r.id,
    createdAt: r.created_at,
    final: r.final === 1,
    recordingKey: r.recording_key,
    detailsKey: r.details_key,
    hasBulk: r.bulk === 1,
  }));
}

/**
 * Applies a plan: the objects go first, then the rows, so a failure between the two leaves a row pointing at nothing
 * (served as no recording) and the next pass deletes it, never an object no row names any more.
 */
export async function applyPlan(env: Env, orgId: number, plan: Pick<PurgePlan, "deleteRuns" | "dropDetails" | "dropRecordings" | "keys">): Promise<void> {
  for (let i = 0; i < plan.keys.length; i += 1000) await env.UPLOADS.delete(plan.keys.slice(i, i + 1000));
  const stmts: D1PreparedStatement[] = [];
  const ids = (list: number[]) => JSON.stringify(list);
  if (plan.deleteRuns.length) {
    stmts.push(
      env.DB.prepare("DELETE FROM webhook_deliveries WHERE run_id IN (SELECT value FROM json_each(?))").bind(ids(plan.deleteRuns)),
      env.DB.prepare("DELETE FROM workflow_runs WHERE org_id = ? AND id IN (SELECT value FROM json_each(?))").bind(orgId, ids(plan.deleteRuns)),
    );
  }
  if (plan.dropDetails.length)
    stmts.push(
      env.DB.prepare(
        `UPDATE workflow_runs SET details_key = NULL, transcript = NULL, tool_calls = NULL, analysis = NULL, gathered_context = NULL
         WHERE org_id = ? AND id IN (SELECT value FROM json_each(?))`,
      ).bind(orgId, ids(plan.dropDetails)),
    );
  if (plan.dropRecordings.length)
    stmts.push(
      env.DB.prepare("UPDATE workflow_runs SET recording_key = NULL, recording_rate = NULL WHERE org_id = ? AND id IN (SELECT value FROM json_each(?))").bind(
        orgId,
        ids(plan.dropRecordings),
      ),
    );
  if (stmts.length) await env.DB.batch(stmts);
}

/** One organization's pass within the budget: what it removed and whether it reached the end. */
async function purgeOrg(env: Env, orgId: number, now: number, budget: Budget): Promise<{ counts: PurgeCounts; complete: boolean }> {
  let counts: PurgeCounts = { recordings: 0, transcripts: 0, runs: 0 };
  for (const agent of await agentsOf(env, orgId)) {
    let after = 0;
    for (;;) {
      if (budget.rows <= 0 || budget.keys <= 0) return { counts, complete: false };
      const limit = Math.min(purgeLimits.page, budget.rows);
      const rows = await readPage(env, agent.workflowId, after, limit);
      budget.rows -= rows.length;
      const plan = planPage(rows, agent.retention, now, budget.keys, after, rows.length < limit);
      await applyPlan(env, orgId, plan);
      budget.keys -= plan.keys.length;
      counts = addCounts(counts, countsOf(plan));
      if (plan.done) break;
      // Stopped short of the page's end by the key budget: the rest waits for the next tick.
      if (plan.lastId !== rows[rows.length - 1]?.id) return { counts, complete: false };
      after = plan.lastId;
    }
  }
  return { counts, complete: true };
}

/** The cron's purge: every due organization, until the invocation's budget is spent. */
export async function purgeExpired(env: Env, now: number): Promise<{ orgs: number; counts: PurgeCounts }> {
  const budget: Budget = { keys: purgeLimits.keys, rows: purgeLimits.rows };
  let total: PurgeCounts = { recordings: 0, transcripts: 0, runs: 0 };
  let orgs = 0;
  for (const { orgId, last } of await candidates(env)) {
    if (!purgeDue(last, now)) continue;
    if (budget.rows <= 0 || budget.keys <= 0) break;
    try {
      const { counts, complete } = await purgeOrg(env, orgId, now, budget);
      // Counts only: no number, run or key, so the audit log itself holds no personal data.
      await auditStatement(
        getDb(env),
        { orgId, apiKeyId: null },
        { action: "purge", resourceType: "run_data", resourceId: orgId, summary: { ...counts, complete } },
        sql`1`,
      );
      total = addCounts(total, counts);
      orgs++;
    } catch (err) {
      log("error", "retention_purge_failed", { org_id: orgId, error: String(err) });
    }
  }
  return { orgs, counts: total };
}
