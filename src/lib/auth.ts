// API-key authentication (contract 3): `X-API-Key` wins over `Authorization: Bearer`; keys are looked up by SHA-256.
import type { MiddlewareHandler } from "hono";
import { and, eq, isNull } from "drizzle-orm";
import { apiKeys } from "../db/schema";
import { getDb } from "./db";
import { sha256Hex } from "./crypto";
import { ApiError } from "./errors";
import type { AppEnv } from "./types";

/** Paths that prove themselves another way (or are public): health, the API document, carrier callbacks, signed uploads. */
const PUBLIC_PATHS = new Set(["/api/v1/health", "/api/v1/openapi.json", "/api/v1/docs"]);
const PUBLIC_PREFIXES = ["/api/v1/telephony/", "/api/v1/uploads/"];

export function isPublicPath(path: string): boolean {
  return PUBLIC_PATHS.has(path) || PUBLIC_PREFIXES.some((p) => path.startsWith(p));
}

export function presentedKey(headers: Headers): string | null {
  const direct = headers.get("x-api-key")?.trim();
  if (direct) return direct;
  const auth = headers.get("authorization")?.trim();
  const m = auth ? /^Bearer\s+(.+)$/i.exec(auth) : null;
  return m ? m[1].trim() : null;
}

const unauthenticated = (msg: string) => new ApiError(401, msg, { "WWW-Authenticate": "Bearer" });

export const requireApiKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (isPublicPath(c.req.path)) return next();
  const key = presentedKey(c.req.raw.headers);
  if (!key) throw unauthenticated("Not authenticated");
  const hash = await sha256Hex(key);
  const row = await getDb(c.env)
    .select({ id: apiKeys.id, orgId: apiKeys.orgId })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
    .get();
  if (!row) throw unauthenticated("Invalid API key");
  c.set("orgId", row.orgId);
  c.set("apiKeyId", row.id);
  return next();
};
