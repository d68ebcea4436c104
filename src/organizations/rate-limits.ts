// Rate limits: their defaults and the Worker vars
// that change them. The buckets live in the organization's Durable Object (organization-object.ts); the per-request
// check of API requests is request-limit.ts.
import { ApiError } from "../lib/errors";
import { parseLimit, type BucketLimit, type BucketState } from "../lib/token-bucket";

export const RATE_LIMIT_EXCEEDED = "Rate limit exceeded";

export type RateLimits = {
  /** Single calls started per organization (all its keys together). */
  callStartsPerOrg: BucketLimit;
  /** Single calls started per API key. */
  callStartsPerKey: BucketLimit;
  /** Authenticated API requests per API key (every operation, call starts included). */
  requestsPerKey: BucketLimit;
};

/**
 * Defaults. Call starts: 2 per second per key (7,200 an hour, ample for calls placed as events happen) with bursts
 * of 10, and 5 per second per organization with bursts of 20 (the default concurrent-call cap), so one leaked key
 * cannot spend the whole organization's allowance and no key can dial in bulk: bulk dialing is what campaigns are
 * for, and they are paced by their own `rate_limit`, not by these buckets. API requests: 20 per second per key with
 * bursts of 100, room for dashboards and polling while a runaway client is stopped within seconds.
 */
export const DEFAULT_RATE_LIMITS: RateLimits = {
  callStartsPerOrg: { rate: 5, burst: 20 },
  callStartsPerKey: { rate: 2, burst: 10 },
  requestsPerKey: { rate: 20, burst: 100 },
};

type LimitVars = Partial<Pick<Env, "RATE_LIMIT_CALL_STARTS_PER_ORG" | "RATE_LIMIT_CALL_STARTS_PER_KEY" | "RATE_LIMIT_REQUESTS_PER_KEY">>;

/** The deployment's limits: each Worker var is "RATE,BURST" (per second, bucket size); empty or invalid = default. */
export function rateLimitsOf(env: LimitVars): RateLimits {
  return {
    callStartsPerOrg: parseLimit(env.RATE_LIMIT_CALL_STARTS_PER_ORG, DEFAULT_RATE_LIMITS.callStartsPerOrg),
    callStartsPerKey: parseLimit(env.RATE_LIMIT_CALL_STARTS_PER_KEY, DEFAULT_RATE_LIMITS.callStartsPerKey),
    requestsPerKey: parseLimit(env.RATE_LIMIT_REQUESTS_PER_KEY, DEFAULT_RATE_LIMITS.requestsPerKey),
  };
}

/** The 429 for request rate (told apart from `Concurrent call limit reached`). */
export const rateLimited = (retryAfterSeconds: number) =>
  new ApiError(429, RATE_LIMIT_EXCEEDED, { "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))) });

/**
 * Request tokens are handed to an isolate in batches (request-limit.ts): it may hold the extra ones this long, and at
 * most REQUEST_BATCH_MAX - 1 of them (fewer at low rates: maxRequestBatch). Unspent ones go back at its next ask.
 */
export const REQUEST_HOLD_MS = 1_000;
export const REQUEST_BATCH_MAX = 32;

/** The most tokens one ask takes for `limit`: at most a second's worth, so a key limited to 1/s is never batched. */
export function maxRequestBatch(limit: BucketLimit): number {
  return Math.max(1, Math.min(REQUEST_BATCH_MAX, Math.floor((limit.rate * REQUEST_HOLD_MS) / 1000)));
}

/** What the organization's object answers for an API request: `granted` tokens (this request's and any extra to hold). */
export type RequestDecision = { ok: boolean; granted: number; retryAfterSeconds: number; state: BucketState; limit: BucketLimit };
