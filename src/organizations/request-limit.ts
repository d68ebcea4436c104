// API requests per key, checked on every authenticated request.
//
// Cost: no D1 round trip, and one RPC to the organization's object per batch of requests, not per request. A key's
// first request in an isolate (or its first after a quiet second) takes one token; while the key keeps asking, the
// isolate asks for a batch (maxRequestBatch: at most a second's worth of the key's rate, at most 32) and spends the
// extra tokens here for at most REQUEST_HOLD_MS; unspent ones go back to the object with the key's next ask. The
// tokens are taken from the object's bucket before they are spent, so isolates never admit tokens the bucket did not
// have. Bound: over any interval, a key is admitted at most burst + rate × interval + what isolates held at its start
// (each at most maxRequestBatch - 1, for at most a second); a key that paces itself near its limit holds nothing
// extra for long, and one isolate's 429 and Retry-After are the object's, computed as before.
//
// Each isolate also remembers the last bucket state the object answered for a key. The object's bucket has spent at
// least what this isolate saw spent (and refills at the same rate), so when the remembered state is empty the object's
// is empty too and the request is refused here without an RPC: a client that keeps hammering after its 429 costs no
// RPCs.
//
// Parallel requests (issue 39): asks of one key run in parallel, so batches in flight can empty the object's bucket
// while the tokens they carry are not yet in this isolate; a request refused by the object (or by the remembered
// state) therefore first waits for this isolate's other asks of the key and spends what they brought. Within one
// isolate a key is refused only once the burst is spent; across isolates, a refusal may still meet tokens another
// isolate holds (less than a batch each, for at most REQUEST_HOLD_MS).
import type { MiddlewareHandler } from "hono";
import { clock } from "../lib/clock";
import { refill, secondsUntil, type BucketLimit, type BucketState } from "../lib/token-bucket";
import type { AppEnv } from "../lib/types";
import { organizationStub } from "./organization-object";
import { rateLimited, REQUEST_BATCH_MAX, REQUEST_HOLD_MS, type RequestDecision } from "./rate-limits";
import { log } from "../lib/log";

// Last answer per key id, in this isolate. Bounded: forgetting an entry only costs one RPC.
const lastSeen = new Map<number, { state: BucketState; limit: BucketLimit }>();
const MAX_REMEMBERED = 10_000;

/** Tokens this isolate holds for a key: spendable until `until`; `lastAt` is the key's latest request here. */
type Held = { tokens: number; until: number; lastAt: number };
const held = new Map<number, Held>();

// This isolate's asks of the object in flight, per key: a request about to be refused waits for them first. Each is
// kept as a plain promise settled with the ask: the ask itself is an RPC promise, an I/O object of the request that
// made it, and another request awaiting it is refused by the runtime ("Cannot perform I/O on behalf of a different
// request") and then cancelled as hung.
const asking = new Map<number, Set<Promise<void>>>();

function track<T>(keyId: number, ask: Promise<T>): Promise<void> {
  const flying = asking.get(keyId) ?? new Set<Promise<void>>();
  asking.set(keyId, flying);
  const settled = ask.then(
    () => undefined,
    () => undefined,
  );
  flying.add(settled);
  void settled.then(() => {
    flying.delete(settled);
    if (!flying.size && asking.get(keyId) === flying) asking.delete(keyId);
  });
  return settled;
}

/** Waits for this isolate's other asks of the key, then spends a token they brought, if any. */
async function spendAfterAsks(keyId: number, now: number, own?: Promise<void>): Promise<boolean> {
  for (;;) {
    if (spendHeld(keyId, now)) return true;
    const others = [...(asking.get(keyId) ?? [])].filter((p) => p !== own);
    if (!others.length) return false;
    await Promise.allSettled(others);
  }
}

/** Seconds to wait when this isolate already knows the key's bucket is empty, else null (ask the object). */
export function knownEmpty(keyId: number, now: number): number | null {
  const seen = lastSeen.get(keyId);
  if (!seen) return null;
  const state = refill(seen.state, seen.limit, now);
  return state.tokens < 1 ? secondsUntil(state, seen.limit) : null;
}

export function remember(keyId: number, decision: Pick<RequestDecision, "state" | "limit"> & Partial<RequestDecision>): void {
  if (lastSeen.size >= MAX_REMEMBERED && !lastSeen.has(keyId)) lastSeen.clear();
  lastSeen.set(keyId, { state: decision.state, limit: decision.limit });
}

/** Test support: forget every held token and remembered answer (as a fresh isolate). */
export function clearRequestLimitCache(): void {
  lastSeen.clear();
  held.clear();
  asking.clear();
}

/** Spends a held token if there is one still valid. */
function spendHeld(keyId: number, now: number): boolean {
  const h = held.get(keyId);
  if (!h || h.tokens < 1 || now >= h.until) return false;
  h.tokens--;
  h.lastAt = now;
  return true;
}

function hold(keyId: number, tokens: number, now: number): void {
  const h = held.get(keyId);
  if (h && now < h.until) {
    // A concurrent request's batch arrived too: keep both, expiring with the earlier one.
    h.tokens += tokens;
    h.lastAt = now;
    return;
  }
  if (held.size >= MAX_REMEMBERED && !h) held.clear();
  held.set(keyId, { tokens, until: now + REQUEST_HOLD_MS, lastAt: now });
}

/** API requests per key: runs after authentication; public paths (no key) are not limited here. */
export const limitApiRequests: MiddlewareHandler<AppEnv> = async (c, next) => {
  const keyId = c.get("apiKeyId");
  if (keyId === undefined) return next();
  const now = clock.now();
  if (spendHeld(keyId, now)) return next();
  const h = held.get(keyId);
  // Unspent tokens of an expired batch go back with this ask (the remembered state does not count them).
  const giveBack = h && h.tokens >= 1 ? Math.floor(h.tokens) : 0;
  if (!giveBack) {
    const known = knownEmpty(keyId, now);
    if (known !== null) {
      if (await spendAfterAsks(keyId, now)) return next();
      throw rateLimited(knownEmpty(keyId, now) ?? known);
    }
  }
  const want = h && now - h.lastAt < REQUEST_HOLD_MS ? REQUEST_BATCH_MAX : 1;
  if (h) {
    h.tokens = 0;
    h.lastAt = now;
  }
  let decision: RequestDecision;
  const ask = organizationStub(c.env, c.get("orgId")).takeRequest(keyId, want, giveBack);
  const asked = track(keyId, ask);
  try {
    decision = await ask;
  } catch (err) {
    // An unreachable limiter lets the request through rather than failing the whole API. Call starts stay guarded:
    // their buckets are checked in the same RPC that grants the call's lease, which no call goes without.
    log("warning", "request_limit_unavailable", { key_id: keyId, error: String(err) });
    return next();
  }
  remember(keyId, decision);
  if (!decision.ok) {
    if (await spendAfterAsks(keyId, now, asked)) return next();
    throw rateLimited(decision.retryAfterSeconds);
  }
  hold(keyId, decision.granted - 1, now);
  return next();
};
