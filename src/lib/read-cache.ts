// Answers of hot authenticated reads (a campaign's progress, a telephony configuration) this isolate gave in the
// last READ_CACHE_MS, given again without their hop to a Durable Object or D1. Pollers of one resource share it.
//
// Bounds: an answer is served for at most READ_CACHE_MS after it was read (hits never extend it; 0 turns the cache
// off). A write by the same organization through this isolate (any request but GET, HEAD or OPTIONS) drops the
// organization's answers when it begins and when it ends, and a read that was under way meanwhile does not store
// its answer: what a client changed through an isolate, that isolate answers fresh at once. Changes made elsewhere
// (another isolate, a campaign's own progress, a carrier's callback) show within READ_CACHE_MS. Answers are kept
// per organization (the key names it): nothing here is served to another organization. At most READ_CACHE_MAX
// entries (the oldest read goes first).

import type { MiddlewareHandler } from "hono";
import { clock } from "./clock";
import type { AppEnv } from "./types";

export const READ_CACHE_DEFAULT_MS = 1_000;
/** The longest staleness a deployment may configure. */
export const READ_CACHE_LIMIT_MS = 5_000;
export const READ_CACHE_MAX = 1_000;

type Entry = { value: unknown; generation: number; expiresAt: number };

// Insertion order is read order, and a deployment keeps every entry as long: expired entries leave from the oldest
// end (a lookup still checks its own entry's time, for configurations that differ, as tests' do).
const entries = new Map<string, Entry>();
/** Per organization: bumped by each write it makes through this isolate (entries of an older generation are dead). */
const generations = new Map<number, number>();
/** Organizations whose generation is kept at most (then everything starts over, entries included). */
const MAX_ORGANIZATIONS = 10_000;
const parsed = new WeakMap<object, number>();

/** READ_CACHE_MS as configured (milliseconds, 0 to READ_CACHE_LIMIT_MS); unset or invalid = the default. */
export function readCacheMs(env: { READ_CACHE_MS?: string }): number {
  const known = parsed.get(env);
  if (known !== undefined) return known;
  const raw = env.READ_CACHE_MS?.trim();
  const n = raw ? Number(raw) : Number.NaN;
  const ms = Number.isInteger(n) && n >= 0 ? Math.min(n, READ_CACHE_LIMIT_MS) : READ_CACHE_DEFAULT_MS;
  parsed.set(env, ms);
  return ms;
}

const generationOf = (orgId: number) => generations.get(orgId) ?? 0;
const keyOf = (orgId: number, resource: string) => `${orgId} ${resource}`;

function dropExpired(now: number): void {
  for (const [key, e] of entries) {
    if (e.expiresAt > now) return;
    entries.delete(key);
  }
}

/** The answer read for `resource` less than the TTL ago, unless the organization wrote through this isolate since. */
export function cachedRead(orgId: number, resource: string, now: number): { value: unknown } | undefined {
  dropExpired(now);
  const e = entries.get(keyOf(orgId, resource));
  return e && e.expiresAt > now && e.generation === generationOf(orgId) ? { value: e.value } : undefined;
}

/** Taken before a read starts: its answer is stored only if no write by the organization began or ended since. */
export const readTicket = (orgId: number): number => generationOf(orgId);

/** Keeps an answer (never changed afterwards: it is served as it is) read with `ticket`. */
export function storeRead(orgId: number, resource: string, ticket: number, value: unknown, now: number, ttlMs: number): void {
  if (ttlMs <= 0 || ticket !== generationOf(orgId)) return;
  const key = keyOf(orgId, resource);
  entries.delete(key); // re-inserted last, so insertion order stays read order
  if (entries.size >= READ_CACHE_MAX) entries.delete(entries.keys().next().value as string);
  entries.set(key, { value, generation: ticket, expiresAt: now + ttlMs });
}

/** A write by the organization begins or ends here: its answers so far are not served again. */
export function organizationWrote(orgId: number): void {
  // Forgetting generations alone could bring dead entries back to life: both go.
  if (generations.size >= MAX_ORGANIZATIONS && !generations.has(orgId)) clearReadCache();
  generations.set(orgId, generationOf(orgId) + 1);
}

/**
 * `read()`'s answer for `resource` of the organization, from this isolate's recent answers when one is fresh. Only
 * answers are kept: a read that throws or finds nothing (null: the caller's 404) is asked again next time.
 */
export async function readThrough<T>(env: { READ_CACHE_MS?: string }, orgId: number, resource: string, read: () => Promise<T>): Promise<T> {
  const ttl = readCacheMs(env);
  if (ttl === 0) return read();
  const hit = cachedRead(orgId, resource, clock.now());
  if (hit) return hit.value as T;
  const ticket = readTicket(orgId);
  const value = await read();
  if (value != null) storeRead(orgId, resource, ticket, value, clock.now(), ttl);
  return value;
}

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/** After authentication: a request that may write drops its organization's answers as it begins and as it ends. */
export const forgetReadsOnWrite: MiddlewareHandler<AppEnv> = async (c, next) => {
  const orgId = c.get("orgId");
  if (orgId === undefined || READS.has(c.req.method.toUpperCase())) return next();
  organizationWrote(orgId);
  try {
    await next();
  } finally {
    organizationWrote(orgId);
  }
};

/** Test support: emptying the cache. */
export function clearReadCache(): void {
  entries.clear();
  generations.clear();
}
