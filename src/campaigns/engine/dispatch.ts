// The dispatch loop: rounds that pick the contacts that may be called now (window, concurrency, pace, their local
// hours), take the organization's leases for them in one request, record their attempts and start the calls without
// waiting for the carriers. One loop at a time, whether the alarm or a status batch started it.
import { clock } from "../../lib/clock";
import type { LeaseResult } from "../../organizations/leases";
import type { CallingRules } from "../../telephony/calling-rules";
import type { CampaignRow } from "./campaign-row";
import type { CampaignCore } from "./core";
import type { Dial } from "./dial";
import type { OrgLeases } from "./leases";
import type { StateMoves } from "./moves";
import { LEASE_TTL_SECONDS, MAX_ROUND, ORG_RETRY_FALLBACK_MS, attemptCapOf, leaseIdFor, sortAnswers, unanswered, type Picked } from "./round";
import { RulesCache } from "./rules-cache";
import { log } from "../../lib/log";

/**
 * Call starts awaiting the carrier at most: a round does not wait for the previous round's starts (a slow carrier
 * must not hold back the next dial), but no more than this many are outstanding at once.
 */
const MAX_STARTING = 50;
/**
 * Wall time one alarm invocation spends dialing at most (real time, not the clock: it bounds the invocation, well
 * inside the runtime's limits). Dispatch only runs this long when calls end as fast as they start.
 */
const MAX_DISPATCH_MS = 20_000;

/**
 * A status batch's first round: the slots its final statuses will free (`extraRoom`, their leases in `release`) are
 * asked for before the statuses are written; `meanwhile` writes them once the request is on its way.
 */
export type RoundHint = { extraRoom: number; release: string[]; meanwhile: () => void; sent?: boolean };

export class Dispatch {
  /** The dispatch loop running now, if any. */
  private current: Promise<void> | null = null;
  /** Set when something freed a slot or queued a contact while the loop ran: it goes round once more. */
  private again = false;
  /** Call starts waiting for the carrier's answer (at most MAX_STARTING): a round does not wait for them. */
  private readonly starting = new Set<Promise<void>>();
  private readonly rules: RulesCache;

  constructor(
    private readonly core: CampaignCore,
    private readonly moves: StateMoves,
    private readonly dial: Dial,
    private readonly leases: OrgLeases,
  ) {
    this.rules = new RulesCache(core.env);
  }

  /** Whether a dispatch loop is running now. */
  get busy(): boolean {
    return this.current !== null;
  }

  /** The loop with a failure logged and retried shortly (by the alarm). */
  async safely(awaitStarts = true, maxMs = MAX_DISPATCH_MS, first?: RoundHint): Promise<void> {
    try {
      await this.loopOnce(awaitStarts, maxMs, first);
    } catch (err) {
      this.core.log.write("error", "dispatch_error", "Dispatching calls failed; retrying shortly", { error: String(err) });
      this.core.timers.atMost("dispatch", 0, clock.now() + ORG_RETRY_FALLBACK_MS);
    }
  }

  /**
   * One loop at a time: a caller that finds it running marks it to go round once more and returns (it does not wait:
   * that loop may be waiting on a carrier). `awaitStarts`: also wait for the carriers' answers to the calls this loop
   * started, and look again after them. `maxMs`: wall time for the loop, after which the alarm (due at once) carries on.
   */
  private async loopOnce(awaitStarts: boolean, maxMs: number, first?: RoundHint): Promise<void> {
    if (this.current) {
      this.again = true;
      return;
    }
    const run = (async () => {
      try {
        await this.loop(awaitStarts, maxMs, first);
      } finally {
        this.current = null;
      }
      // Leases final statuses left for a next round that did not come.
      const c = this.core.campaign();
      if (c && this.leases.toRelease.length) await this.leases.release(c.org_id, this.leases.toRelease.splice(0));
    })();
    this.current = run;
    return run;
  }

  private async loop(awaitStarts: boolean, maxMs: number, first?: RoundHint): Promise<void> {
    const since = Date.now();
    // The starts this loop made (an earlier loop's are not waited for here: that loop's caller did not wait either).
    const mine = new Set<Promise<void>>();
    try {
      for (;;) {
        this.again = false;
        const more = await this.round(mine, first);
        first = undefined;
        if (!more && !this.again) {
          if (!awaitStarts || !mine.size) break;
          // Starts still out may free a slot (a refusal) or change the state (a configuration error): look again after.
          await Promise.all(mine);
          continue;
        }
        if (Date.now() - since >= maxMs) {
          // Bounded work per invocation: the next alarm, due at once, carries on.
          if (this.core.campaign()?.state === "running") this.core.pokeDispatch(clock.now());
          break;
        }
      }
    } finally {
      if (awaitStarts) await Promise.all(mine);
    }
  }

  /**
   * One round: pick what may start now, take leases, record `dialing`, then start the calls (not awaited: they join
   * `starting`, of which a round waits until fewer than MAX_STARTING are out). True: go again.
   */
  async round(mine: Set<Promise<void>>, hint?: RoundHint): Promise<boolean> {
    const { core } = this;
    if (hint && this.starting.size >= MAX_STARTING) return false; // not now: the statuses are applied first, then again
    while (this.starting.size >= MAX_STARTING) await Promise.race(this.starting);
    let c = core.campaign();
    if (c?.state !== "running") return false;
    let now = clock.now();
    let s = core.settings(c);
    if (!core.window.refresh(now)) return false;
    const room = s.max_concurrency - core.openAttempts() + (hint?.extraRoom ?? 0);
    if (room <= 0) return false; // a final status or a timeout pokes dispatch again
    const budget = core.pace.budget(s.rate_limit, now);
    if (budget <= 0) {
      core.timers.atMost("dispatch", 0, core.pace.nextAt(s.rate_limit, now));
      return false;
    }
    const rules = await this.rules.get(c);
    const picks = this.pick(now, Math.min(room, budget, MAX_ROUND), rules);
    if (!picks.length) {
      if (this.moves.checkCompletion(now)) core.summary.force();
      return false;
    }
    const { leaseIds, answers, engineBound } = await this.askLeases(c, picks, rules, hint);

    // The world may have moved while the leases were requested: check everything again before recording.
    c = core.campaign();
    now = clock.now();
    if (!c) return false;
    s = core.settings(c);
    const { chosen, unused, skipped, refused } = sortAnswers(picks, answers, leaseIds, {
      go: c.state === "running" && core.window.at(now).open,
      room: s.max_concurrency - core.openAttempts(),
      budget: core.pace.budget(s.rate_limit, now),
    });
    const campaign = c;
    const started = core.db.tx(() => {
      const out = this.dial.record(chosen, now, unused);
      if (refused) this.moves.noteBlocked(engineBound ? "engine_capacity" : "org_cap", refused);
      else if (out.length) this.moves.noteBlocked(null);
      this.dial.applySkips(skipped, now);
      return out;
    });
    if (refused) core.timers.atMost("dispatch", 0, now + Math.max(1, refused.retryAfterSeconds ?? 5) * 1000);
    if (unused.length) await this.leases.release(campaign.org_id, unused, true);
    for (const x of started) {
      const p: Promise<void> = this.dial
        .start(campaign, x.attempt, x.contact)
        .catch((err) => {
          core.log.write("error", "dispatch_error", "Recording a call start failed", { contact_id: x.contact.id, error: String(err) });
        })
        .finally(() => {
          this.starting.delete(p);
          mine.delete(p);
        });
      this.starting.add(p);
      mine.add(p);
    }
    return (started.length > 0 || skipped.length > 0) && !refused;
  }

  /**
   * Up to `want` queued contacts whose local hours are open now, in queue order. Zones are given out in queue order
   * until enough are found, as many at a time as the round wants (the alarm gives them out ahead in batches: no round
   * carries one); dispatch is woken when the first held zone opens.
   */
  private pick(now: number, want: number, rules: CallingRules): Picked[] {
    const { db, hours } = this.core;
    const select = () =>
      db.all<Picked>`SELECT id, attempts, phone_number FROM contacts WHERE status = 'queued'
        AND zone_id IN (SELECT id FROM zones WHERE open = 1) ORDER BY queue_key, id LIMIT ${want}`;
    const nextZone = hours.refresh(now, rules.localHours);
    let picks = select();
    while (picks.length < want && hours.assign(want) > 0) {
      hours.refresh(now, rules.localHours);
      picks = select();
    }
    const zoneOpens = hours.refresh(now, rules.localHours) ?? nextZone;
    if (zoneOpens != null) this.core.timers.atMost("dispatch", 0, zoneOpens);
    return picks;
  }

  /** The round's leases, asked for in one request that also gives back the leases final statuses freed. */
  private async askLeases(
    c: CampaignRow,
    picks: Picked[],
    rules: CallingRules,
    hint?: RoundHint,
  ): Promise<{ leaseIds: string[]; answers: LeaseResult[]; engineBound: boolean }> {
    const leaseIds = picks.map((p) => leaseIdFor(c.campaign_id, p.id, p.attempts + 1));
    const cap = attemptCapOf(rules);
    // Leases that final statuses freed go in the same call, released before anything is granted.
    const freed = [...this.leases.toRelease.splice(0), ...(hint?.release ?? [])];
    const asked = this.leases
      .client(c.org_id)
      .acquireMany(
        leaseIds.map((leaseId, i) => ({ leaseId, ttlSeconds: LEASE_TTL_SECONDS, waiter: c.campaign_id, dial: { number: picks[i].phone_number, cap } })),
        freed.length ? freed : undefined,
      )
      .catch((err): LeaseResult[] => {
        log("warning", "lease_acquire_failed", { campaign_id: c.campaign_id, error: String(err) });
        this.leases.toRelease.push(...freed); // perhaps not released: again with the next call (releasing is idempotent)
        return unanswered(leaseIds.length);
      });
    // The statuses are written once the answer is back: writes made before it went out would hold the request until
    // they are stored.
    if (hint) hint.sent = true;
    const answers = await asked;
    hint?.meanwhile();
    const engineBound = await this.askEngines(c, leaseIds, answers, freed);
    return { leaseIds, answers, engineBound };
  }

  /**
   * The engine budget after the organization's cap (src/capacity/): a dial the engines have no room for gives its
   * organization lease back and becomes a refusal, so the contact waits in the campaign (woken when engine room
   * frees) instead of a call that would fail mid-conversation. True when the engines refused one.
   */
  private async askEngines(c: CampaignRow, leaseIds: string[], answers: LeaseResult[], freed: string[]): Promise<boolean> {
    const granted = leaseIds.filter((_, i) => answers[i].granted);
    const engines = granted.length || freed.length ? await this.leases.engines(c, granted, freed, LEASE_TTL_SECONDS) : null;
    if (!engines) return false;
    const refused: string[] = [];
    let g = 0;
    for (const [i, a] of answers.entries()) {
      if (!a.granted) continue;
      const e = engines[g++];
      if (e?.granted !== false) continue;
      answers[i] = { granted: false, inUse: a.inUse, cap: a.cap, retryAfterSeconds: e.retryAfterSeconds ?? 5 };
      refused.push(leaseIds[i]);
    }
    if (refused.length) {
      try {
        await this.leases.client(c.org_id).releaseMany(refused, true);
      } catch (err) {
        log("warning", "lease_release_failed", { lease_ids: refused, error: String(err) });
      }
    }
    return refused.length > 0;
  }
}
