// API keys this isolate has recently found in D1, by SHA-256 hash, so an authenticated request need not look its key
// up every time.
//
// Bounds: an entry is trusted for KEY_CACHE_TTL_MS from the moment it was read (hits never extend it), so a key
// revoked elsewhere (another isolate, straight in D1) stops working here within that time; a revocation through the
// API evicts it in the isolate that served it at once. Only keys found in D1 are kept (never unknown ones), so
// guessing keys cannot grow the map, and it holds at most KEY_CACHE_MAX entries (the oldest read goes first).

export const KEY_CACHE_TTL_MS = 10_000;
export const KEY_CACHE_MAX = 1_000;

export type CachedKey = { id: number; orgId: number; lastUsedAt: string | null };
type Entry = CachedKey & { expiresAt: number };

const entries = new Map<string, Entry>();

/** The key with this hash if read from D1 less than KEY_CACHE_TTL_MS ago. */
export function cachedKey(hash: string, now: number): Entry | undefined {
  const e = entries.get(hash);
  if (e && e.expiresAt > now) return e;
  if (e) entries.delete(hash);
  return undefined;
}

/** Remembers a key just read from D1; returns the entry (its lastUsedAt may be updated in place). */
export function rememberKey(hash: string, key: CachedKey, now: number): Entry {
  entries.delete(hash); // re-inserted last, so insertion order stays read order
  if (entries.size >= KEY_CACHE_MAX) entries.delete(entries.keys().next().value as string);
  const e = { ...key, expiresAt: now + KEY_CACHE_TTL_MS };
  entries.set(hash, e);
  return e;
}

/** Drops a revoked key at once. */
export function forgetKey(hash: string): void {
  entries.delete(hash);
}

/** Test support: how many keys are held, and emptying the cache. */
export const keyCacheSize = (): number => entries.size;
export const clearKeyCache = (): void => entries.clear();
