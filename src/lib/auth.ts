// API-key authentication: `X-API-Key` wins over `Authorization: Bearer`; keys are looked up by SHA-256.
import type { MiddlewareHandler } from "hono";
import { clock } from "./clock";
import { sha256Hex } from "./crypto";
import { ApiError } from "./errors";
import { cachedKey, markUsed, rememberKey } from "./key-cache";
import type { AppEnv } from "./types";
import { log } from "./log";

/** Paths that prove themselves another way (or are public): health, the API document, carrier callbacks, signed uploads
 *  and signed recording links, and a web call's socket (its single-use token: a browser's WebSocket sends no key). */
const PUBLIC_PATHS = new Set(["/api/v1/health", "/api/v1/openapi.json", "/api/v1/docs"]);
const PUBLIC_PREFIXES = ["/api/v1/telephony/", "/api/v1/uploads/", "/api/v1/recordings/", "/api/v1/web-call/"];

export function isPublicPath(path: string): boolean {
  return PUBLIC_PATHS.has(path) || PUBLIC_PREFIXES.some((p) => path.startsWith(p));
}

export function presentedKey(headers: Headers): string | null {
  const direct = headers.get("x-api-key")?.trim();
  if (direct) return direct;
  const auth = headers.get("authorization")?.trim();
  const m = auth ? /^Bearer\s+(.+)$/i.exec(auth) : null;
  if (m) return m[1].trim();
  // A browser cannot set headers on a WebSocket: it offers `edgedial.events, <key>` as its subprotocols instead.
  if (headers.get("upgrade")?.toLowerCase() !== "websocket") return null;
  const [name, key] = (headers.get("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim());
  return name === "edgedial.events" && key ? key : null;
}

/** drizzle and the tables load on the first lookup, not in every new isolate's start (bench/startup/README.md). */
const d1 = async () => {
  const [{ and, eq, isNull, lt, or }, { apiKeys }, { getDb }] = await Promise.all([import("drizzle-orm"), import("../db/schema"), import("./db")]);
  return { and, eq, isNull, lt, or, apiKeys, getDb };
};

const unauthenticated = (msg: string) => new ApiError(401, msg, { "WWW-Authenticate": "Bearer" });

/**
 * `last_used_at` is at most this stale: authentication writes it only when the stored value is older, so a busy key
 * costs one D1 write a minute, not one per request (several isolates at the same moment collapse to one change).
 */
export const LAST_USED_RESOLUTION_MS = 60_000;

async function noteKeyUse(env: Env, keyId: number, now: number): Promise<void> {
  const stale = new Date(now - LAST_USED_RESOLUTION_MS).toISOString();
  const { and, eq, isNull, lt, or, apiKeys, getDb } = await d1();
  await getDb(env)
    .update(apiKeys)
    .set({ lastUsedAt: new Date(now).toISOString() })
    .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, stale))))
    .run();
}

export const requireApiKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (isPublicPath(c.req.path)) return next();
  const key = presentedKey(c.req.raw.headers);
  if (!key) throw unauthenticated("Not authenticated");
  const now = clock.now();
  // Within its TTL a key is served from this isolate's cache (key-cache.ts): no hashing, no D1 round trip.
  let row = cachedKey(key, now);
  if (!row) {
    const hash = await sha256Hex(key);
    const { and, eq, isNull, apiKeys, getDb } = await d1();
    const found = await getDb(c.env)
      .select({ id: apiKeys.id, orgId: apiKeys.orgId, lastUsedAt: apiKeys.lastUsedAt })
      .from(apiKeys)
      .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
      .get();
    if (!found) throw unauthenticated("Invalid API key");
    row = rememberKey(key, hash, found, now);
  }
  c.set("orgId", row.orgId);
  c.set("apiKeyId", row.id);
  const stale = !(row.lastUsedMs >= now - LAST_USED_RESOLUTION_MS);
  // Marked before the write, so concurrent requests on a cached key write once, not each.
  if (stale) markUsed(row, now);
  const keyId = row.id;
  // Alongside the request rather than before it; a failure to note the use never fails the request.
  const noted = stale ? noteKeyUse(c.env, keyId, now).catch((err) => log("warning", "key_last_used_failed", { key_id: keyId, error: String(err) })) : undefined;
  await next();
  await noted;
};
