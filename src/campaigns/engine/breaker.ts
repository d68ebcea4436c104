// The circuit breaker: over a sliding window of finished attempts, it trips when the window holds at
// least min_calls_in_window of them and the failure share is at least failure_threshold.
import type { CircuitBreaker } from "./settings";

/** Start of the window at `now`; a resume resets it, so nothing before `resetAt` counts. */
export function breakerWindowStart(now: number, cfg: CircuitBreaker, resetAt: number): number {
  return Math.max(now - cfg.window_seconds * 1000, resetAt);
}

export function breakerTrips(cfg: CircuitBreaker, finished: number, failures: number): boolean {
  if (!cfg.enabled || finished <= 0) return false;
  return finished >= cfg.min_calls_in_window && failures / finished >= cfg.failure_threshold;
}

/** A self-contained sliding window (used where no SQL is at hand, e.g. models in tests). */
export class BreakerWindow {
  private events: { at: number; failure: boolean }[] = [];
  private resetAt = 0;

  record(at: number, failure: boolean): void {
    this.events.push({ at, failure });
  }

  reset(at: number): void {
    this.resetAt = at;
    this.events = this.events.filter((e) => e.at >= at);
  }

  trips(cfg: CircuitBreaker, now: number): boolean {
    const from = breakerWindowStart(now, cfg, this.resetAt);
    this.events = this.events.filter((e) => e.at >= from);
    return breakerTrips(cfg, this.events.length, this.events.filter((e) => e.failure).length);
  }
}
