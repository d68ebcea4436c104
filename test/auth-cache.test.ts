// The API key cache (src/lib/key-cache.ts): hits skip D1, revocation holds within the TTL (at once through the API),
// keys never cross organizations, and the cache stays bounded whatever is presented.
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { clock } from "../src/lib/clock";
import { KEY_CACHE_MAX, KEY_CACHE_TTL_MS, cachedKey, clearKeyCache, forgetKey, keyCacheSize, rememberKey } from "../src/lib/key-cache";
import { type Counted, countedCall } from "./d1-counter";
import { call, createOrg } from "./helpers";

const KEYS = "/api/v1/organizations/api-keys";
const keyLookups = (r: Counted) => r.sql.filter((s) => /"key_hash" = \?/.test(s)).length;
const list = (key: string) => countedCall("GET", KEYS, key);

let t0 = 0;
beforeEach(() => {
  clearKeyCache();
  t0 = Date.now();
  clock.set(t0);
});
afterEach(() => {
  clock.set(null);
  clearKeyCache();
});

describe("API key cache", () => {
  it("a cached key authenticates without asking D1 for it", async () => {
    const org = await createOrg();
    const first = await list(org.key);
    expect(first.status).toBe(200);
    expect(keyLookups(first)).toBe(1);
    clock.advance(KEY_CACHE_TTL_MS - 1);
    const again = await list(org.key);
    expect(again.status).toBe(200);
    expect(keyLookups(again)).toBe(0);
    expect(again.trips).toBe(1); // the list itself; last_used_at was written by the first request
    clock.advance(1); // expired: read again
    expect(keyLookups(await list(org.key))).toBe(1);
  });

  it("a key revoked outside this isolate is refused once its entry expires", async () => {
    const org = await createOrg();
    expect((await list(org.key)).status).toBe(200);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE org_id = ?").bind(new Date(t0).toISOString(), org.id).run();
    clock.advance(KEY_CACHE_TTL_MS - 1);
    expect((await list(org.key)).status).toBe(200); // the stated bound: up to KEY_CACHE_TTL_MS
    clock.advance(1);
    const after = await list(org.key);
    expect(after.status).toBe(401);
    expect(after.json).toEqual({ detail: "Invalid API key" });
  });

  it("revoking through the API evicts the key at once", async () => {
    const org = await createOrg();
    const made = await call("POST", KEYS, { key: org.key, body: { name: "second" } });
    const second = made.json.key as string;
    expect((await list(second)).status).toBe(200);
    expect((await countedCall("DELETE", `${KEYS}/${made.json.id}`, org.key)).status).toBe(200);
    const after = await list(second);
    expect(after.status).toBe(401);
    expect(keyLookups(after)).toBe(1);
  });

  it("each key is served as its own organization's, however often both are cached", async () => {
    const a = await createOrg();
    const b = await createOrg();
    const ids = async (orgId: number) =>
      (await env.DB.prepare("SELECT id FROM api_keys WHERE org_id = ? ORDER BY id DESC").bind(orgId).all<{ id: number }>()).results.map((r) => r.id);
    for (let i = 0; i < 3; i++) {
      for (const org of [a, b, a]) {
        const res = await list(org.key);
        expect(res.json.items.map((k: { id: number }) => k.id)).toEqual(await ids(org.id));
      }
    }
  });

  it("unknown keys are not kept; the cache never holds more than KEY_CACHE_MAX keys", async () => {
    for (let i = 0; i < 20; i++) {
      const res = await list(`edk_unknown${i}`);
      expect(res.status).toBe(401);
      expect(keyLookups(res)).toBe(1);
    }
    expect(keyCacheSize()).toBe(0);
    for (let i = 0; i < KEY_CACHE_MAX + 500; i++) rememberKey(`k${i}`, `h${i}`, { id: i, orgId: 1, lastUsedAt: null }, t0);
    expect(keyCacheSize()).toBe(KEY_CACHE_MAX);
    expect(cachedKey("k0", t0)).toBeUndefined(); // the oldest went first
    expect(cachedKey(`k${KEY_CACHE_MAX + 499}`, t0)?.id).toBe(KEY_CACHE_MAX + 499);
  });

  it("expired keys leave memory with the next lookup, oldest first; forgetKey finds a key by its hash", () => {
    rememberKey("k-old", "h-old", { id: 1, orgId: 1, lastUsedAt: null }, t0);
    rememberKey("k-new", "h-new", { id: 2, orgId: 1, lastUsedAt: null }, t0 + 5);
    expect(cachedKey("k-new", t0 + KEY_CACHE_TTL_MS)?.id).toBe(2);
    expect(keyCacheSize()).toBe(1); // k-old expired and is gone, though nobody asked for it
    forgetKey("h-new");
    expect(cachedKey("k-new", t0)).toBeUndefined();
    expect(keyCacheSize()).toBe(0);
  });

  it("a cached key is not hashed again", async () => {
    const org = await createOrg();
    const digest = vi.spyOn(crypto.subtle, "digest");
    try {
      expect((await list(org.key)).status).toBe(200);
      const first = digest.mock.calls.length;
      expect(first).toBeGreaterThanOrEqual(1); // read from D1 by its hash
      expect((await list(org.key)).status).toBe(200);
      expect(digest.mock.calls.length).toBe(first);
    } finally {
      digest.mockRestore();
    }
  });
});
