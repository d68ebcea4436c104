// The one source of time, so tests (and Durable Object alarms under test) can move it.
let offsetMs = 0;
let fixedMs: number | null = null;
let sleeper: ((ms: number) => Promise<void>) | null = null;

export const clock = {
  now(): number {
    return fixedMs ?? Date.now() + offsetMs;
  },
  /** Test support: pin time to an instant (null returns to the real clock). */
  set(ms: number | null): void {
    fixedMs = ms;
  },
  /** Test support: move time forward. */
  advance(ms: number): void {
    if (fixedMs !== null) fixedMs += ms;
    else offsetMs += ms;
  },
  /** Waits `ms` (a carrier's Retry-After, a backoff). Tests replace it, so no test sleeps for real. */
  sleep(ms: number): Promise<void> {
    return sleeper ? sleeper(ms) : new Promise((resolve) => setTimeout(resolve, ms));
  },
  /** Test support: replace `sleep` (null restores real waiting). */
  setSleep(fn: ((ms: number) => Promise<void>) | null): void {
    sleeper = fn;
  },
  /** Test support: the real clock again, with no offset and real waiting (what a fresh isolate has). */
  reset(): void {
    offsetMs = 0;
    fixedMs = null;
    sleeper = null;
  },
};

export const isoNow = (): string => new Date(clock.now()).toISOString();
