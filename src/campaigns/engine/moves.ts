// The moves the engine makes on its own, inside the caller's transaction: entering and leaving `running`, the circuit
// breaker (running → paused), completion (running → completed), and noting that the organization's cap holds calls.
import type { LeaseResult } from "../../organizations/leases";
import { OPEN_ATTEMPT } from "./attempts";
import { breakerTrips, breakerWindowStart } from "./breaker";
import type { CampaignCore } from "./core";
import { transition } from "./state";

export class StateMoves {
  constructor(private readonly core: CampaignCore) {}

  /** Entering `running`: the window is looked at afresh, dispatch runs soon, an empty campaign completes. */
  onRunning(now: number): void {
    this.core.window.restart();
    this.core.window.refresh(now);
    if (!this.checkBreaker(now)) this.checkCompletion(now);
    this.core.pokeDispatch(now);
  }

  /** Leaving `running`: no window changes or dispatch rounds to wait for. */
  clearRunningTimers(): void {
    this.core.timers.clear("window");
    this.core.timers.clear("dispatch");
    this.core.window.timerGone();
  }

  /** Pending and waiting contacts are skipped (cancel, failure); open attempts run on and are recorded. */
  skipRemaining(): number {
    const n = this.core.db.changes`UPDATE contacts SET status = 'skipped' WHERE status IN ('queued', 'waiting')`;
    this.core.timers.clear("retry");
    this.core.timers.clear("cap_wait");
    return n;
  }

  /** Trips the breaker (running → paused) when the window's failure share reaches the threshold. */
  checkBreaker(now: number): boolean {
    const { core } = this;
    const c = core.need();
    const cfg = core.settings(c).circuit_breaker;
    if (c.state !== "running" || !cfg.enabled) return false;
    const from = breakerWindowStart(now, cfg, c.breaker_since);
    const w = core.db.one<{ n: number; f: number }>`SELECT count(*) AS n, coalesce(sum(failure), 0) AS f FROM attempts WHERE ended_at >= ${from}`!;
    if (!breakerTrips(cfg, w.n, w.f)) return false;
    transition(core.db, "breaker_trip", now);
    core.log.write(
      "warning",
      "circuit_breaker_tripped",
      `Circuit breaker tripped: ${w.f} of the last ${w.n} calls failed within ${cfg.window_seconds}s (threshold ${Math.round(cfg.failure_threshold * 100)}%); campaign paused`,
      {
        failures: w.f,
        finished: w.n,
        failure_threshold: cfg.failure_threshold,
        window_seconds: cfg.window_seconds,
      },
    );
    core.log.write("info", "campaign_paused", "Campaign paused by the circuit breaker; calls in progress finish", { reason: "circuit_breaker" });
    this.clearRunningTimers();
    return true;
  }

  /** running → completed the moment nothing is pending, in flight or awaiting retry. */
  checkCompletion(now: number): boolean {
    const { core } = this;
    const c = core.need();
    if (c.state !== "running" || !c.import_done) return false;
    // An append under way may still add contacts: completion waits for its commit, discard or expiry (staged.ts).
    if (core.staged.live(now)) return false;
    if (core.db.one`SELECT 1 AS x FROM contacts WHERE status IN ('queued', 'waiting', 'active') LIMIT 1`) return false;
    if (core.db.one`SELECT 1 AS x FROM attempts WHERE ${OPEN_ATTEMPT} LIMIT 1`) return false;
    transition(core.db, "complete", now);
    const k = core.counts();
    core.log.write("info", "campaign_completed", `Campaign completed: ${k.completed} of ${k.total} contacts reached`, {
      total: k.total,
      completed: k.completed,
      failed: k.failed,
      executed_count: k.executed,
    });
    this.clearRunningTimers();
    core.summary.force();
    return true;
  }

  /**
   * What holds calls back now (logged when it starts to): the organization's cap, or the deployment's engine
   * capacity (src/capacity/), or nothing.
   */
  noteBlocked(reason: "org_cap" | "engine_capacity" | null, lease?: LeaseResult): void {
    const c = this.core.need();
    if ((c.blocked ?? null) === reason) return;
    this.core.db.run`UPDATE campaign SET blocked = ${reason}`;
    if (reason === "org_cap") {
      const what = lease && lease.cap >= 0 ? ` (${lease.inUse} of ${lease.cap} in use)` : "";
      this.core.log.write("warning", "org_cap_reached", `The organization's concurrent call limit is reached${what}; calls wait for a free slot`, {
        in_use: lease?.inUse ?? null,
        cap: lease?.cap ?? null,
      });
    }
    if (reason === "engine_capacity")
      this.core.log.write(
        "warning",
        "engine_capacity_reached",
        "The deployment's AI engines are fully used by calls in progress; calls wait for engine capacity",
        {},
      );
  }
}
