// How an attempt ends: its final outcome written once (a final status is never overwritten), its contact done or
// waiting for a retry, its slot and lease freed, then the breaker, completion or the next dispatch.
import { clock } from "../../lib/clock";
import { isBreakerFailure } from "./outcomes";
import { OPEN_ATTEMPT, type AttemptRow } from "./attempts";
import type { CampaignRow } from "./campaign-row";
import type { CampaignCore } from "./core";
import type { OrgLeases } from "./leases";
import type { StateMoves } from "./moves";
import { retryDueAt } from "./retry";

/** A status batch dials at once; the alarm it sets this much later is only a fallback. */
const KICK_FALLBACK_MS = 1000;

/** A contact whose attempt ended: its id, the outcome, and when it is tried again (null: it is done). */
export type ContactEnd = [number, string, number | null];
export type EndOptions = { noRetry?: boolean; error?: string };

/** Items grouped by a key of a few values (compared as text), each group's values in the items' order. */
export function groupBy<T, K extends readonly (string | number)[], V>(items: T[], key: (t: T) => K, value: (t: T) => V): [K, V[]][] {
  const groups = new Map<string, [K, V[]]>();
  for (const t of items) {
    const k = key(t);
    const id = JSON.stringify(k);
    const g = groups.get(id);
    if (g) g[1].push(value(t));
    else groups.set(id, [k, [value(t)]]);
  }
  return [...groups.values()];
}

export class AttemptEndings {
  constructor(
    private readonly core: CampaignCore,
    private readonly moves: StateMoves,
    private readonly leases: OrgLeases,
  ) {}

  /**
   * Ends an open attempt with a final outcome: frees the slot (and lease), schedules a retry when the policy says so,
   * feeds the breaker and completes the campaign when nothing is left. False when the attempt was already final.
   */
  async finish(a: AttemptRow, outcome: string, atMs: number, opts: EndOptions): Promise<boolean> {
    const c = this.core.need();
    const leases: string[] = [];
    const applied = this.core.db.tx(() => {
      if (!this.close(c, a, outcome, atMs, opts, leases)) return false;
      this.afterFinish(clock.now(), false);
      return true;
    });
    if (leases.length) await this.leases.release(c.org_id, leases);
    return applied;
  }

  /**
   * The attempt's part of finish (in the caller's transaction): its outcome, its contact's retry or end, its lease
   * added to `leases` for the caller to release. False when it was already final.
   */
  private close(c: CampaignRow, a: AttemptRow, outcome: string, atMs: number, opts: EndOptions, leases: string[]): boolean {
    const now = clock.now();
    const n = this.core.db.run`UPDATE attempts SET status = ${outcome}, ended_at = ${now}, failure = ${isBreakerFailure(outcome) ? 1 : 0},
      error = coalesce(${opts.error ?? null}, error) WHERE id = ${a.id} AND ${OPEN_ATTEMPT}`;
    if (!n) return false;
    this.core.timers.clear("timeout", a.id);
    this.endContacts([this.contactEnd(c, a, outcome, atMs, opts.noRetry ?? false)]);
    if (a.lease_id) leases.push(a.lease_id);
    return true;
  }

  /** What an attempt's end means for its contact: its outcome, and when it is tried again (null: done). */
  contactEnd(c: CampaignRow, a: AttemptRow, outcome: string, atMs: number, noRetry: boolean): ContactEnd {
    const live = c.state === "running" || c.state === "paused" || c.state === "draft";
    return [a.contact_id, outcome, live && !noRetry ? retryDueAt(outcome, a.attempt, this.core.settings(c).retry_config, atMs) : null];
  }

  /** Contacts whose attempt ended: done, or waiting with a retry timer; one statement per kind of end. */
  endContacts(ends: ContactEnd[]): void {
    for (const [[status, outcome], ids] of groupBy(
      ends,
      (x) => [x[2] == null ? "done" : "waiting", x[1]] as const,
      (x) => x[0],
    ))
      this.core.db
        .run`UPDATE contacts SET status = ${status}, outcome = ${outcome} WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND status = 'active'`;
    for (const [contactId, , due] of ends) if (due != null) this.core.timers.set("retry", contactId, due);
    this.core.markDirty();
  }

  /**
   * After attempts ended (in their transaction): the breaker, completion, or the next dispatch. `kicked`: the caller
   * dispatches at once (a status batch), so the alarm is only its fallback.
   */
  afterFinish(now: number, kicked: boolean): void {
    const c = this.core.need();
    if (c.state !== "running") return;
    if (this.moves.checkBreaker(now) || this.moves.checkCompletion(now)) this.core.summary.force();
    else if (kicked) this.core.timers.atMost("dispatch", 0, now + KICK_FALLBACK_MS);
    else this.core.pokeDispatch(now);
  }
}
