// The one place a call's status changes: monotonic (a status only moves forward, a final one is never
// overwritten), idempotent (duplicates change nothing), then the side effects of a change: the lease is
// freed on a final status and the owning campaign object hears every change. Statuses of one campaign forwarded
// together reach its object in one RPC (forwardCampaignStatus).
import { and, eq, inArray, isNull, or, sql } from "drizzle-orm";
import { workflowRuns } from "../../db/schema";
import { getDb } from "../../lib/db";
import { isoNow } from "../../lib/clock";
import { isMachine } from "../../telephony/providers/kit";
import type { CallStatus, StatusUpdate } from "../../telephony/providers/types";
import type { CampaignCallStatus } from "../campaign/campaign-calls";
import { campaignPort } from "../campaign/campaign-port";
import { organizationStub } from "../../organizations/organization-object";
import { RANK, isFinal, type RunRow } from "./runs";
import { emitRunCompleted } from "../../webhooks/run-events";
import { log } from "../../lib/log";
import { callSessionStub } from "../session/stub";
import { releaseCallEngines } from "../admission/engine-admission";
import { latestOf, mayBePerson } from "./run-truth";

export type ApplyResult = { applied: boolean; status: string; run: RunRow };

const ALL: CallStatus[] = Object.keys(RANK) as CallStatus[];

/** The status this update means for this run (answered-or-not causes, AMD verdicts seen earlier). */
export function effectiveStatus(run: Pick<RunRow, "status" | "answeredAt" | "answeredBy">, u: StatusUpdate): CallStatus {
  const answered = run.answeredAt != null || run.status === "in_progress";
  let status = u.unansweredStatus && !answered ? u.unansweredStatus : u.status;
  if (status === "completed" && isMachine(u.answeredBy ?? run.answeredBy)) status = "voicemail";
  return status;
}

/** Whether the run's call session heard the callee say something (a turn of theirs in its transcript). */
async function heardPerson(env: Env, runId: number): Promise<boolean> {
  try {
    const snap = await callSessionStub(env, runId).snapshot();
    return snap.turns.some((t) => t.role === "callee");
  } catch (err) {
    log("error", "session_not_asked", { run_id: runId, error: String(err) });
    return false;
  }
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

type Waiter = { status: CampaignCallStatus; resolve: (r: { applied: boolean }) => void; reject: (err: unknown) => void };
/** Statuses waiting to go, per campaign namespace (tests bring their own) and campaign. */
const waiting = new WeakMap<object, Map<number, Waiter[]>>();

/** Sends what waits for `campaignId` in one RPC; every waiter hears its own result, or the batch's failure. */
async function sendBatch(env: Env, campaignId: number): Promise<void> {
  const byCampaign = waiting.get(env.CAMPAIGN);
  const batch = byCampaign?.get(campaignId);
  if (!batch?.length) return; // an earlier caller's microtask sent it
  byCampaign!.delete(campaignId);
  try {
    const results = await campaignPort(env, campaignId).onCallStatuses(batch.map((w) => w.status));
    for (const [i, w] of batch.entries()) w.resolve(results[i] ?? { applied: false });
  } catch (err) {
    for (const w of batch) w.reject(err);
  }
}

/**
 * Forwards a status to its campaign's object. Statuses of one campaign forwarded in the same turn of the event loop
 * (an ARI event carrying several channels, a sweep, a carrier's batched callbacks, the statuses of a dispatch round)
 * go in one onCallStatuses RPC, which the object applies one by one (idempotently) and settles once. The batch is
 * sent at the end of the turn (a microtask), so it never joins statuses of another request: a request's promise is
 * settled only by its own I/O. Each caller learns its own status's result, or the batch's failure: then its callback
 * fails, the carrier retries, and a repeated final status is forwarded again, as a lost single status was.
 */
export function forwardCampaignStatus(env: Env, campaignId: number, status: CampaignCallStatus): Promise<{ applied: boolean }> {
  const byCampaign = waiting.get(env.CAMPAIGN) ?? new Map<number, Waiter[]>();
  waiting.set(env.CAMPAIGN, byCampaign);
  const list = byCampaign.get(campaignId) ?? [];
  byCampaign.set(campaignId, list);
  const done = new Promise<{ applied: boolean }>((resolve, reject) => list.push({ status, resolve, reject }));
  // Every caller schedules a send (the first to run takes the batch), so none waits on another's turn to come.
  queueMicrotask(() => void sendBatch(env, campaignId));
  return done;
}

/**
 * Forwards a status to the owning campaign's object. `lease`: the run holds its campaign's lease, which the object
 * releases when it applies the final status; released here when it did not (already final there, unknown to it)
 * or could not be told.
 */
async function notifyCampaign(env: Env, run: RunRow, status: string, at: string, lease = false): Promise<void> {
  if (run.campaignId == null || run.contactId == null || run.attempt == null) return;
  const payload: CampaignCallStatus = { runId: run.id, contactId: run.contactId, attempt: run.attempt, status: status as CallStatus, at };
  // What the session heard goes with a final status (the campaign tells an answered call from a conversation).
  if (isFinal(status) && run.conversation != null) payload.conversation = run.conversation;
  let applied = false;
  try {
    applied = (await forwardCampaignStatus(env, run.campaignId, payload)).applied;
  } finally {
    if (lease && !applied) await releaseLease(env, run);
  }
}

/** The lease is the engine's own for this attempt (CampaignCallRequest.leaseId): the campaign's object frees it. */
const campaignLease = (run: RunRow) => run.campaignId != null && run.leaseId === `campaign:${run.campaignId}:${run.contactId}:${run.attempt}`;

async function releaseLease(env: Env, run: RunRow): Promise<void> {
  if (!run.leaseId) return;
  try {
    await organizationStub(env, run.orgId).release(run.leaseId);
    await releaseCallEngines(env, run.leaseId); // the engine lease has the same id (src/calls/admission/engine-admission.ts)
  } catch (err) {
    // The lease expires on its own; a lost release only holds a slot until then.
    log("error", "lease_release_failed", { run_id: run.id, error: String(err) });
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
  // Written with the status when the status changes too (one write), on its own otherwise.
  const learned =
    u.providerCallId && u.providerCallId !== run.providerCallId && (run.providerCallId == null || (u.requestId && run.providerCallId === u.requestId))
      ? u.providerCallId
      : null;
  const learnAlone = async () => {
    if (!learned) return;
    const row = await db
      .update(workflowRuns)
      .set({ providerCallId: learned })
      .where(
        and(eq(workflowRuns.id, run.id), or(isNull(workflowRuns.providerCallId), eq(workflowRuns.providerCallId, u.requestId ?? run.providerCallId ?? ""))),
      )
      .returning()
      .get();
    if (row) run = row;
  };

  let status = effectiveStatus(run, u);
  // A person talked with the agent: a machine verdict does not make the run voicemail, nor stay on it.
  let person = false;
  if (!isFinal(run.status) && mayBePerson(run, status) && (await heardPerson(env, run.id))) {
    status = "completed";
    person = true;
  }

  if (isFinal(run.status)) {
    await learnAlone();
    // A repeated final status is re-forwarded so a campaign that missed it (an error on our side) still hears it.
    if (status === run.status) await notifyCampaign(env, run, status, run.endedAt ?? at);
    return { applied: false, status: run.status, run };
  }

  // A campaign's call writes nothing to D1 before it is answered: its campaign's object keeps the attempt's progress and
  // the carrier's call id (callIdsOf), which the record learns with the answer or the final status. A new AMD verdict
  // is still kept.
  if (run.campaignId != null && RANK[status] < RANK.in_progress && !(u.answeredBy && !run.answeredBy)) {
    if (RANK[status] > RANK[run.status as CallStatus]) await notifyCampaign(env, run, status, at);
    return { applied: false, status: run.status, run };
  }

  if (!isFinal(status) && RANK[status] <= RANK[run.status as CallStatus]) {
    await learnAlone();
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
  if (learned) {
    const replaces = u.requestId ?? run.providerCallId ?? "";
    set.providerCallId = sql`CASE WHEN ${workflowRuns.providerCallId} IS NULL OR ${workflowRuns.providerCallId} = ${replaces}
      THEN ${learned} ELSE ${workflowRuns.providerCallId} END` as unknown as string;
  }
  set.startedAt = sql`coalesce(${workflowRuns.startedAt}, ${at})` as unknown as string;
  if (person) set.answeredBy = "human";
  else if (u.answeredBy) set.answeredBy = u.answeredBy;
  if (status === "in_progress") set.answeredAt = sql`coalesce(${workflowRuns.answeredAt}, ${at})` as unknown as string;
  if (isFinal(status)) {
    const answered = status === "completed" || status === "voicemail";
    let answeredAt = run.answeredAt;
    if (answered && !answeredAt && u.durationSeconds != null) {
      answeredAt = new Date(Date.parse(at) - u.durationSeconds * 1000).toISOString();
      set.answeredAt = answeredAt;
    }
    // A carrier's timestamp has whole seconds (Twilio's RFC 2822 Timestamp) while the answer was stamped to the
    // millisecond on arrival: the end is never recorded before the answer or the start.
    const endedAt = latestOf(at, answeredAt, run.startedAt);
    set.endedAt = endedAt;
    set.durationSeconds = u.durationSeconds ?? (answered ? secondsBetween(answeredAt, endedAt) : 0);
    // An error explains an unsuccessful end only (Telnyx's normal_clearing carries one for the unanswered case).
    if (u.error && !answered) set.error = u.error;
    // Why it ended: the call session's reason where one ended the call, else what the carrier's status says.
    set.endReason = sql`coalesce(${workflowRuns.endReason}, ${status})` as unknown as string;
  }

  const row = await db
    .update(workflowRuns)
    .set(set)
    .where(and(eq(workflowRuns.id, run.id), inArray(workflowRuns.status, predecessors(status))))
    .returning()
    .get();
  if (!row) {
    // Someone else moved the run first; re-read so the caller sees the truth (and keep the call id learned).
    await learnAlone();
    const fresh = await db.select().from(workflowRuns).where(eq(workflowRuns.id, run.id)).get();
    return { applied: false, status: fresh?.status ?? run.status, run: fresh ?? run };
  }

  const final = isFinal(status);
  // A campaign's lease is freed by its object (one call per batch of final statuses), or by notifyCampaign.
  const byCampaign = final && campaignLease(row);
  if (final && !byCampaign) await releaseLease(env, row);
  if (final) await emitRunCompleted(env, row); // never throws: a webhook problem must not break status processing
  await notifyCampaign(env, row, status, at, byCampaign);
  return { applied: true, status, run: row };
}
