// Token-bucket arithmetic for rate limits. Pure: the caller passes the time,
// so the organization's Durable Object and tests (src/lib/clock.ts) drive it alike.

/** `rate` tokens per second refill a bucket holding at most `burst` tokens. */
export type BucketLimit = { rate: number; burst: number };

/** A bucket's tokens as of `at` (ms since the epoch); a bucket never seen is full. */
export type BucketState = { tokens: number; at: number };

export type TakeResult = {
  ok: boolean;
  /** The bucket afterwards (unchanged when refused, apart from its refill). */
  state: BucketState;
  /** When refused: whole seconds until a token is there, at least 1 (the `Retry-After` value). */
  retryAfterSeconds: number;
};

/** The bucket refilled up to `now`. Time running backwards (a test moving the clock back) refills nothing. */
export function refill(state: BucketState | undefined, limit: BucketLimit, now: number): BucketState {
  if (!state) return { tokens: limit.burst, at: now };
  const elapsed = Math.max(0, now - state.at);
  return { tokens: Math.min(limit.burst, state.tokens + (elapsed * limit.rate) / 1000), at: Math.max(now, state.at) };
}

/** Whole seconds until `state` holds `n` tokens again; at least 1, since `Retry-After: 0` invites a tight loop. */
export function secondsUntil(state: BucketState, limit: BucketLimit, n = 1): number {
  const missing = Math.max(0, n - state.tokens);
  return Math.max(1, Math.ceil(missing / limit.rate));
}

/** Takes `n` tokens from one bucket if it has them. */
export function take(state: BucketState | undefined, limit: BucketLimit, now: number, n = 1): TakeResult {
  return takeAll([{ state, limit }], now, n)[0];
}

/**
 * Takes `n` tokens from every bucket, or from none: a call start needs both its organization's and its key's
 * bucket, and a refusal by one must not spend the other's. Results are in the order given; when refused, each
 * `retryAfterSeconds` is the longest wait among the refusing buckets.
 */
export function takeAll(buckets: { state: BucketState | undefined; limit: BucketLimit }[], now: number, n = 1): TakeResult[] {
  const filled = buckets.map((b) => refill(b.state, b.limit, now));
  const short = filled.map((s) => s.tokens < n);
  if (short.some(Boolean)) {
    const wait = Math.max(...buckets.map((b, i) => (short[i] ? secondsUntil(filled[i], b.limit, n) : 1)));
    return filled.map((state) => ({ ok: false, state, retryAfterSeconds: wait }));
  }
  return filled.map((s) => ({ ok: true, state: { tokens: s.tokens - n, at: s.at }, retryAfterSeconds: 0 }));
}

/**
 * A limit written as "RATE,BURST" (tokens per second, bucket size), e.g. "2,10". Anything else (empty, not two
 * positive numbers, a burst below 1) is `fallback`: a typo in a Worker var must not turn every request into a 500.
 */
export function parseLimit(text: string | undefined | null, fallback: BucketLimit): BucketLimit {
  const m = /^\s*(\d+(?:\.\d+)?)\s*,\s*(\d+)\s*$/.exec(text ?? "");
  if (!m) return fallback;
  const rate = Number(m[1]);
  const burst = Number(m[2]);
  return rate > 0 && burst >= 1 ? { rate, burst } : fallback;
}
