// API keys this isolate has recently found in D1, so an authenticated request need not look its key up every time,
// nor hash it: entries are found by the key as presented, and each remembers its SHA-256 hash (what D1 stores and
// what a revocation names).
//
// Bounds: an entry is trusted for KEY_CACHE_TTL_MS from the moment it was read (hits never extend it), so a key
// revoked elsewhere (another isolate, straight in D1) stops working here within that time; a revocation through the
// API evicts it in the isolate that served it at once. Only keys found in D1 are kept (never unknown ones), so
// guessing keys cannot grow the map, and it holds at most KEY_CACHE_MAX entries (the oldest read goes first).
// Presented keys are held in this isolate's memory, like the request headers that brought them, for the TTL: expired
// entries are dropped from the oldest end on every lookup, or by the isolate's end if no request comes.

export const KEY_CACHE_TTL_MS = 10_000;
export const KEY_CACHE_MAX = 1_000;

export type CachedKey = { id: number; orgId: number; lastUsedAt: string | null };
type Entry = CachedKey & { hash: string; expiresAt: number /** lastUsedAt as a number, parsed once */; lastUsedMs: number };

// Insertion order is read order, and every entry lives KEY_CACHE_TTL_MS: the first entry expires first.
const entries = new Map<string, Entry>();

function dropExpired(now: number): void {
  for (const [key, e] of entries) {
    if (e.expiresAt > now) return;
    entries.delete(key);
  }
}

/** The entry for this presented key if it was read from D1 less than KEY_CACHE_TTL_MS ago. */
export function cachedKey(key: string, now: number): Entry | undefined {
  dropExpired(now);
  return entries.get(key);
}

/** Remembers a key just read from D1 (found by `hash`); returns the entry (its lastUsedAt may be updated in place). */
export function rememberKey(key: string, hash: string, found: CachedKey, now: number): Entry {
  entries.delete(key); // re-inserted last, so insertion order stays read order
  if (entries.size >= KEY_CACHE_MAX) entries.delete(entries.keys().next().value as string);
  const lastUsedMs = found.lastUsedAt ? Date.parse(found.lastUsedAt) : Number.NEGATIVE_INFINITY;
  const e = { ...found, hash, expiresAt: now + KEY_CACHE_TTL_MS, lastUsedMs };
  entries.set(key, e);
  return e;
}

/** Notes a use written to D1 (authentication marks it before the write, so concurrent requests write once). */
export function markUsed(e: Entry, now: number): void {
  e.lastUsedAt = new Date(now).toISOString();
  e.lastUsedMs = now;
}

/** Drops a revoked key at once (revocations are rare: a scan of at most KEY_CACHE_MAX entries). */
export function forgetKey(hash: string): void {
  for (const [key, e] of entries) if (e.hash === hash) entries.delete(key);
}

/** Test support: how many keys are held, and emptying the cache. */
export const keyCacheSize = (): number => entries.size;
export const clearKeyCache = (): void => entries.clear();
