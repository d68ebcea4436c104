// Call statuses from the calls module, several calls' callbacks in one RPC, in the order they arrived. Each is applied
// alone and idempotently (duplicates, reorderings and unknown attempts change nothing; a final status is applied once
// and never overwritten); then, once for the batch, the slots it freed are dialed at once rather than at the next alarm.
import type { CampaignCallRef, CampaignCallStatus } from "../../calls/campaign/campaign-calls";
import { clock } from "../../lib/clock";
import { PROGRESS_ORDER, contactOutcome, isBreakerFailure, isFinalStatus } from "./outcomes";
import { keepConversations, lateConversation } from "./conversations";
import { OPEN_ATTEMPT, attemptKey, attemptsOf, isOpen, type AttemptRow } from "./attempts";
import type { CampaignRow } from "./campaign-row";
import type { CampaignCore } from "./core";
import type { Dispatch, RoundHint } from "./dispatch";
import { groupBy, type AttemptEndings, type ContactEnd } from "./endings";
import type { OrgLeases } from "./leases";

/** A status batch dials into the slots it freed itself, before it answers, for this long at most (then the alarm carries on). */
const KICK_MAX_MS = 250;

/** What one status does to the attempt it names, as the statuses before it in its batch left that attempt. */
export type Verdict =
  | { kind: "unknown" } // no such attempt, or another run's (a stray callback)
  | { kind: "none" } // already final, or no news
  | { kind: "progress"; rank: number; prev: number }
  | { kind: "final" };

/** The judgment of one status (pure): the engine's rules for statuses, applied by `apply`. */
export function judge(a: AttemptRow | undefined, st: CampaignCallStatus): Verdict {
  if (!a || (a.run_id != null && st.runId != null && a.run_id !== st.runId)) return { kind: "unknown" };
  if (!isOpen(a)) return { kind: "none" };
  if (isFinalStatus(st.status)) return { kind: "final" };
  const rank = PROGRESS_ORDER[st.status];
  if (rank === undefined) return { kind: "none" };
  const prev = a.last_status ? (PROGRESS_ORDER[a.last_status] ?? -1) : -1;
  // A repeat or a late status is news only while the attempt has not learned its run.
  if (rank <= prev && a.run_id != null) return { kind: "none" };
  return { kind: "progress", rank, prev };
}

export class CallStatuses {
  constructor(
    private readonly core: CampaignCore,
    private readonly endings: AttemptEndings,
    private readonly dispatch: Dispatch,
    private readonly leases: OrgLeases,
  ) {}

  /**
   * Applies a batch; then, once for it: the leases are released in one call, the breaker and completion are checked,
   * and the freed slots are dialed at once.
   */
  async apply(batch: CampaignCallStatus[]): Promise<{ applied: boolean }[]> {
    const { core } = this;
    const c = core.campaign();
    if (!c) return batch.map(() => ({ applied: false }));
    const now = clock.now();
    const leases: string[] = [];
    let finished = 0;
    let results: { applied: boolean }[] | null = null;
    const apply = () => {
      if (results) return;
      results = core.db.tx(() => {
        const out = this.write(c, batch, now, leases);
        finished = out.finished;
        if (finished) this.endings.afterFinish(now, true);
        return out.results;
      });
    };
    // The slots these statuses free are asked for before the statuses are written: an object's request waits until
    // its writes are stored, so the round's lease request goes first and the statuses are applied when its answer is
    // back (the round's `meanwhile`). Their leases go back in that same request.
    const freeing = c.state === "running" && !this.dispatch.busy ? this.slotsFreedBy(batch) : null;
    const early: RoundHint | null = freeing?.count ? { extraRoom: freeing.count, release: freeing.leases, meanwhile: apply } : null;
    if (early) await this.dispatch.safely(false, KICK_MAX_MS, early);
    apply();
    // The freed slots are dialed now (the carriers' answers are not awaited), not at the next alarm; a loop already
    // running (the alarm's) goes round once more instead. The leases go back with the next round's acquire (one
    // call to the organization object), or on their own if no round took them.
    const toRelease = this.leases.toRelease;
    toRelease.push(...(early?.sent ? leases.filter((l) => !early.release.includes(l)) : leases));
    // A round that sent the early request already looked again after the statuses were written.
    if (finished && !early?.sent) await this.dispatch.safely(false, KICK_MAX_MS);
    // A loop still running goes round again and takes them with its acquire (or releases them when it ends).
    if (toRelease.length && !this.dispatch.busy) await this.leases.release(c.org_id, toRelease.splice(0));
    // No D1 write here (the summary's periodic refresh goes to the alarm), unless a transition needs it now.
    await core.settle(false);
    return results!;
  }

  /**
   * The carrier's call ids of these calls, by run id (those it knows). A campaign's call writes nothing to D1 when the
   * carrier accepts it, so until its answer or final status the call id is only here: the calls module asks for it to
   * show a run or hang it up.
   */
  callIdsOf(calls: CampaignCallRef[]): Record<number, string> {
    const attempts = attemptsOf(this.core.db, calls);
    const out: Record<number, string> = {};
    for (const r of calls) {
      const a = attempts.get(attemptKey(r.contactId, r.attempt));
      if (a?.provider_call_id && a.run_id === r.runId) out[r.runId] = a.provider_call_id;
    }
    return out;
  }

  /**
   * Read only: how many open attempts the final statuses of `batch` will close, and their leases (the same judgment
   * as `write`). Safe to act on before they are applied: an attempt only ever closes, so a lease released here is one
   * whose call is over, whoever records it.
   */
  private slotsFreedBy(batch: CampaignCallStatus[]): { count: number; leases: string[] } {
    const attempts = attemptsOf(this.core.db, batch);
    const seen = new Set<number>();
    const leases: string[] = [];
    for (const s of batch) {
      const a = attempts.get(attemptKey(s.contactId, s.attempt));
      if (!a || seen.has(a.id) || judge(a, s).kind !== "final") continue;
      seen.add(a.id);
      if (a.lease_id) leases.push(a.lease_id);
    }
    return { count: seen.size, leases };
  }

  /**
   * A batch's statuses (inside its transaction), one by one in the order they came, each judged against its attempt as
   * the statuses before it left it; the attempts they end are written together (a fixed number of statements). Its
   * leases are added to `leases`.
   */
  private write(c: CampaignRow, batch: CampaignCallStatus[], now: number, leases: string[]): { results: { applied: boolean }[]; finished: number } {
    const { db, log } = this.core;
    const attempts = attemptsOf(db, batch);
    const closes: [number, string, number, number | null][] = []; // attempt, outcome, breaker failure, run id learned
    const ends: ContactEnd[] = [];
    const conversations: { id: number; conversation?: boolean | null }[] = [];
    const results = batch.map((st) => {
      const a = attempts.get(attemptKey(st.contactId, st.attempt));
      const v = judge(a, st);
      if (v.kind === "unknown") {
        log.write("warning", "call_status_ignored", "A call status arrived for an attempt this campaign does not know; ignored", {
          run_id: st.runId,
          contact_id: st.contactId,
          attempt: st.attempt,
          status: st.status,
        });
        return { applied: false };
      }
      if (v.kind === "none" && a && !isOpen(a)) return { applied: lateConversation(db, a, st) };
      if (v.kind === "none" || !a) return { applied: false };
      if (v.kind === "progress") {
        db.run`UPDATE attempts SET last_status = CASE WHEN ${v.rank} > coalesce(${v.prev}, -1) THEN ${st.status} ELSE last_status END,
          run_id = coalesce(run_id, ${st.runId ?? null}) WHERE id = ${a.id}`;
        if (v.rank > v.prev) a.last_status = st.status;
        a.run_id ??= st.runId ?? null;
        return { applied: true };
      }
      const at = Date.parse(st.at);
      const atMs = Number.isFinite(at) ? Math.min(at, now) : now;
      // The run id, when this status is how the attempt learns it.
      const learned = a.run_id == null ? (st.runId ?? null) : null;
      a.run_id ??= learned;
      a.status = st.status;
      closes.push([a.id, st.status, isBreakerFailure(st.status) ? 1 : 0, learned]);
      conversations.push({ id: a.id, conversation: st.conversation });
      a.conversation = st.conversation == null ? null : st.conversation ? 1 : 0;
      ends.push(this.endings.contactEnd(c, a, contactOutcome(st.status, st.conversation), atMs, false));
      if (a.lease_id) leases.push(a.lease_id);
      return { applied: true };
    });
    if (closes.length) {
      const at = clock.now();
      // One statement per kind of end (a handful: the outcomes), each over its ids through the primary key.
      for (const [[outcome, failure], ids] of groupBy(
        closes,
        (x) => [x[1], x[2]] as const,
        (x) => x[0],
      ))
        db.run`UPDATE attempts SET status = ${outcome}, ended_at = ${at}, failure = ${failure}
          WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND ${OPEN_ATTEMPT}`;
      keepConversations(db, conversations);
      for (const [id, , , runId] of closes) if (runId != null) db.run`UPDATE attempts SET run_id = ${runId} WHERE id = ${id} AND run_id IS NULL`;
      db.run`DELETE FROM timers WHERE kind = 'timeout' AND ref IN (SELECT value FROM json_each(${JSON.stringify(closes.map((x) => x[0]))}))`;
      this.endings.endContacts(ends);
    }
    return { results, finished: closes.length };
  }
}
