// A running `npm run dev` holds the local D1 SQLite file; a second writer (org:create, the dev banner's key) then
// sees SQLITE_BUSY. Such a failure changed nothing (wrangler runs the statements as one batch), so it is retried
// after a growing, jittered pause. Pure: the caller passes the attempt, the pause and the clock, so tests need no
// wrangler and no real waiting.

export const BUSY = /SQLITE_BUSY|database is locked/i;
export const BUSY_ATTEMPTS = 8;

/** The pause before retry `attempt` (1-based): 100 ms doubling to at most 3.2 s, with up to 50% jitter. */
export const busyBackoffMs = (attempt: number, random: () => number = Math.random) => Math.round(Math.min(3200, 100 * 2 ** (attempt - 1)) * (1 + random() / 2));

export type Attempt = { ok: true; value: string } | { ok: false; output: string };

export type BusyRetryOptions = {
  attempts?: number;
  sleep: (ms: number) => void;
  random?: () => number;
  /** Told before each pause, e.g. to print "retrying in N ms". */
  onRetry?: (attempt: number, ms: number, attempts: number) => void;
};

/**
 * Runs `attempt` until it succeeds; a failure whose output says the database is busy is retried at most
 * `attempts - 1` times. Any other failure, or a busy one past the bound, is thrown with what the last attempt said.
 */
export function retryWhileBusy(attempt: (n: number) => Attempt, label: string, opts: BusyRetryOptions): string {
  const attempts = opts.attempts ?? BUSY_ATTEMPTS;
  for (let n = 1; ; n++) {
    const res = attempt(n);
    if (res.ok) return res.value;
    const busy = BUSY.test(res.output);
    if (busy && n < attempts) {
      const ms = busyBackoffMs(n, opts.random);
      opts.onRetry?.(n, ms, attempts - 1);
      opts.sleep(ms);
      continue;
    }
    const why = busy ? `the local D1 database stayed busy after ${attempts} attempts (stop \`npm run dev\` or try again)` : "failed";
    throw new BusyRetryError(`${label} ${why}`, res.output, n);
  }
}

// Plain fields (no parameter properties): Node runs this file by stripping types, which allows erasable syntax only.
export class BusyRetryError extends Error {
  output: string;
  attempts: number;
  constructor(message: string, output: string, attempts: number) {
    super(message);
    this.output = output;
    this.attempts = attempts;
  }
}
