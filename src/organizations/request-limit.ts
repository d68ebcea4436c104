// API requests per key, checked on every authenticated request.
//
// Cost: no D1 round trip; one RPC to the organization's object for a request that may pass. Each isolate remembers the
// last bucket state the object answered for a key. The object's bucket has spent at least what this isolate saw spent
// (and refills at the same rate), so when the remembered state is empty the object's is empty too and the request is
// refused here without an RPC: a client that keeps hammering after its 429 costs no RPCs.
import type { MiddlewareHandler } from "hono";
import { clock } from "../lib/clock";
import { refill, secondsUntil, type BucketLimit, type BucketState } from "../lib/token-bucket";
import type { AppEnv } from "../lib/types";
import { organizationStub } from "./organization-object";
import { rateLimited, type RequestDecision } from "./rate-limits";

// Last answer per key id, in this isolate. Bounded: forgetting an entry only costs one RPC.
const lastSeen = new Map<number, { state: BucketState; limit: BucketLimit }>();
const MAX_REMEMBERED = 10_000;

/** Seconds to wait when this isolate already knows the key's bucket is empty, else null (ask the object). */
export function knownEmpty(keyId: number, now: number): number | null {
  const seen = lastSeen.get(keyId);
  if (!seen) return null;
  const state = refill(seen.state, seen.limit, now);
  return state.tokens < 1 ? secondsUntil(state, seen.limit) : null;
}

export function remember(keyId: number, decision: RequestDecision): void {
  if (lastSeen.size >= MAX_REMEMBERED && !lastSeen.has(keyId)) lastSeen.clear();
  lastSeen.set(keyId, { state: decision.state, limit: decision.limit });
}

/** API requests per key: runs after authentication; public paths (no key) are not limited here. */
export const limitApiRequests: MiddlewareHandler<AppEnv> = async (c, next) => {
  const keyId = c.get("apiKeyId");
  if (keyId === undefined) return next();
  const known = knownEmpty(keyId, clock.now());
  if (known !== null) throw rateLimited(known);
  let decision: RequestDecision;
  try {
    decision = await organizationStub(c.env, c.get("orgId")).takeRequest(keyId);
  } catch (err) {
    // An unreachable limiter lets the request through rather than failing the whole API. Call starts stay guarded:
    // their buckets are checked in the same RPC that grants the call's lease, which no call goes without.
    console.warn(JSON.stringify({ level: "warning", event: "request_limit_unavailable", key_id: keyId, error: String(err) }));
    return next();
  }
  remember(keyId, decision);
  if (!decision.ok) throw rateLimited(decision.retryAfterSeconds);
  return next();
};
