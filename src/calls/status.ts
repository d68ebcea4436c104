// The one place a call's status changes: monotonic (a status only moves forward, a final one is never
// overwritten), idempotent (duplicates change nothing), then the side effects of a change: the lease is
// freed on a final status and the owning campaign object hears every change.
import { and, eq, inArray, isNull, or, sql } from "drizzle-orm";
import { workflowRuns } from "../db/schema";
import { getDb } from "../lib/db";
import { isoNow } from "../lib/clock";
import { isMachine } from "../telephony/providers/kit";
import type { CallStatus, StatusUpdate } from "../telephony/providers/types";
import type { CampaignCallStatus } from "./campaign-calls";
import { organizationStub } from "../organizations/organization-object";
import { RANK, isFinal, type RunRow } from "./runs";
import { emitRunCompleted } from "../webhooks/run-events";

export type ApplyResult = { applied: boolean; status: string; run: RunRow };

const ALL: CallStatus[] = Object.keys(RANK) as CallStatus[];

/** The status this update means for this run (answered-or-not causes, AMD verdicts seen earlier). */
export function effectiveStatus(run: Pick<RunRow, "status" | "answeredAt" | "answeredBy">, u: StatusUpdate): CallStatus {
  const answered = run.answeredAt != null || run.status === "in_progress";
  let status = u.unansweredStatus && !answered ? u.unansweredStatus : u.status;
  if (status === "completed" && isMachine(u.answeredBy ?? run.answeredBy)) status = "voicemail";
  return status;
}

/** The statuses a run may move from to reach `to` (strictly lower rank). */
export function predecessors(to: CallStatus): CallStatus[] {
  return ALL.filter((s) => RANK[s] < RANK[to]);
}

function secondsBetween(fromIso: string | null, toIso: string): number | null {
  if (!fromIso) return null;
  const d = Date.parse(toIso) - Date.parse(fromIso);
  return Number.isFinite(d) ? Math.max(0, Math.round(d / 1000)) : null;
}

/** Forwards a status to the owning campaign's object (its RPC is idempotent). */
async function notifyCampaign(env: Env, run: RunRow, status: string, at: string): Promise<void> {
  if (run.campaignId == null || run.contactId == null || run.attempt == null) return;
  const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(run.campaignId)));
  const payload: CampaignCallStatus = { runId: run.id, contactId: run.contactId, attempt: run.attempt, status: status as CallStatus, at };
  await stub.onCallStatus(payload);
}

async function releaseLease(env: Env, run: RunRow): Promise<void> {
  if (!run.leaseId) return;
  try {
    await organizationStub(env, run.orgId).release(run.leaseId);
  } catch (err) {
    // The lease expires on its own; a lost release only holds a slot until then.
    console.error(JSON.stringify({ level: "error", msg: "lease release failed", run_id: run.id, error: String(err) }));
  }
}

/**
 * Applies one normalized update to a run. Safe under concurrency: every write is conditional on the
 * run's current status, so two deliveries racing cannot move a status backwards.
 */
export async function applyStatus(env: Env, run: RunRow, u: StatusUpdate): Promise<ApplyResult> {
  const db = getDb(env);
  const at = u.at ?? isoNow();

  // The carrier's call id: learned when unknown, or when it replaces the request id it was correlated on (Plivo, Vobiz).
  if (u.providerCallId && u.providerCallId !== run.providerCallId && (run.providerCallId == null || (u.requestId && run.providerCallId === u.requestId))) {
    const row = await db
      .update(workflowRuns)
      .set({ providerCallId: u.providerCallId })
      .where(
        and(eq(workflowRuns.id, run.id), or(isNull(workflowRuns.providerCallId), eq(workflowRuns.providerCallId, u.requestId ?? run.providerCallId ?? ""))),
      )
      .returning()
      .get();
    if (row) run = row;
  }

  const status = effectiveStatus(run, u);

  if (isFinal(run.status)) {
    // A repeated final status is re-forwarded so a campaign that missed it (an error on our side) still hears it.
    if (status === run.status) await notifyCampaign(env, run, status, run.endedAt ?? at);
    return { applied: false, status: run.status, run };
  }

  if (!isFinal(status) && RANK[status] <= RANK[run.status as CallStatus]) {
    // Late or duplicate progress: only an AMD verdict not yet recorded is kept.
    if (u.answeredBy && !run.answeredBy) {
      const row = await db
        .update(workflowRuns)
        .set({ answeredBy: u.answeredBy })
        .where(and(eq(workflowRuns.id, run.id), isNull(workflowRuns.answeredBy)))
        .returning()
        .get();
      if (row) run = row;
    }
    return { applied: false, status: run.status, run };
  }

  const set: Partial<typeof workflowRuns.$inferInsert> = { status };
  set.startedAt = sql`coalesce(${workflowRuns.startedAt}, ${at})` as unknown as string;
  if (u.answeredBy) set.answeredBy = u.answeredBy;
  if (status === "in_progress") set.answeredAt = sql`coalesce(${workflowRuns.answeredAt}, ${at})` as unknown as string;
  if (isFinal(status)) {
    const answered = status === "completed" || status === "voicemail";
    let answeredAt = run.answeredAt;
    if (answered && !answeredAt && u.durationSeconds != null) {
      answeredAt = new Date(Date.parse(at) - u.durationSeconds * 1000).toISOString();
      set.answeredAt = answeredAt;
    }
    set.endedAt = at;
    set.durationSeconds = u.durationSeconds ?? (answered ? secondsBetween(answeredAt, at) : 0);
    // An error explains an unsuccessful end only (Telnyx's normal_clearing carries one for the unanswered case).
    if (u.error && !answered) set.error = u.error;
  }

  const row = await db
    .update(workflowRuns)
    .set(set)
    .where(and(eq(workflowRuns.id, run.id), inArray(workflowRuns.status, predecessors(status))))
    .returning()
    .get();
  if (!row) {
    // Someone else moved the run first; re-read so the caller sees the truth.
    const fresh = await db.select().from(workflowRuns).where(eq(workflowRuns.id, run.id)).get();
    return { applied: false, status: fresh?.status ?? run.status, run: fresh ?? run };
  }

  if (isFinal(status)) await releaseLease(env, row);
  if (isFinal(status)) await emitRunCompleted(env, row); // never throws: a webhook problem must not break status processing
  await notifyCampaign(env, row, status, at);
  return { applied: true, status, run: row };
}
