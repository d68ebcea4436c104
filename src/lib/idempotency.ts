// `Idempotency-Key`: the same key and request within 24 hours returns the first response
// without doing the work again; the same key with another request is 422. Shared by the call endpoints
// and campaign create. Records live in D1 (`idempotency_keys`), one per (organization, scope, key).
import { z } from "@hono/zod-openapi";
import { and, eq, lt } from "drizzle-orm";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { idempotencyKeys } from "../db/schema";
import { canonicalJson } from "./canonical-json";
import { clock } from "./clock";
import { sha256Hex } from "./crypto";
import { getDb } from "./db";
import { ApiError, invalid } from "./errors";

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The `Idempotency-Key` request header as documented: its limits are the ones withIdempotency enforces (one check,
 * one message), stated here so a schema-driven client knows them.
 */
export function idempotencyKeyHeader(description: string) {
  return z
    .string()
    .optional()
    .openapi({
      param: { name: IDEMPOTENCY_HEADER, in: "header" },
      description: `${description}. 1 to 255 visible ASCII characters (0x21–0x7E: no spaces); anything else is a 422.`,
      minLength: 1,
      maxLength: 255,
      pattern: "^[\\x21-\\x7E]{1,255}$",
      example: "order-7f3a9c",
    });
}

export type IdempotentResponse = { status: ContentfulStatusCode; body: unknown };
export type IdempotentResult = IdempotentResponse & { replayed: boolean };

export type IdempotencyOptions = {
  orgId: number;
  /** The operation, e.g. "public_call" or "campaign_create". */
  scope: string;
  /** The header value; absent means no idempotency. */
  key: string | null | undefined;
  /** What must match for a replay: the body, plus anything else that selects the work (e.g. the path). */
  request: unknown;
};

/**
 * Runs `work` once per key. Only a response the work returns is remembered; a refusal it throws (ApiError:
 * 404, 409, 422, 429, ...) placed nothing, so the key is freed and a retry with the same key runs again.
 */
export async function withIdempotency(env: { DB: D1Database }, opts: IdempotencyOptions, work: () => Promise<IdempotentResponse>): Promise<IdempotentResult> {
  if (opts.key === undefined || opts.key === null) return { ...(await work()), replayed: false };
  if (!KEY.test(opts.key)) {
    throw invalid(["header", IDEMPOTENCY_HEADER], "Idempotency-Key must be 1 to 255 visible ASCII characters", "value_error", opts.key);
  }
  const db = getDb(env);
  const requestHash = await sha256Hex(canonicalJson(opts.request ?? null));
  const where = and(eq(idempotencyKeys.orgId, opts.orgId), eq(idempotencyKeys.scope, opts.scope), eq(idempotencyKeys.key, opts.key));
  const now = clock.now();

  await db.delete(idempotencyKeys).where(and(where, lt(idempotencyKeys.createdAt, new Date(now - IDEMPOTENCY_TTL_MS).toISOString())));
  const claimed = await db
    .insert(idempotencyKeys)
    .values({ orgId: opts.orgId, scope: opts.scope, key: opts.key, requestHash, createdAt: new Date(now).toISOString() })
    .onConflictDoNothing()
    .returning()
    .get();

  if (!claimed) {
    const prior = await db.select().from(idempotencyKeys).where(where).get();
    if (!prior) return withIdempotency(env, opts, work); // expired and removed between the two statements
    if (prior.requestHash !== requestHash) {
      throw invalid(["header", IDEMPOTENCY_HEADER], "Idempotency-Key was already used with a different request", "idempotency_key_reused", opts.key);
    }
    if (prior.responseStatus === null) throw new ApiError(409, "A request with this Idempotency-Key is still in progress", { "Retry-After": "1" });
    return { status: prior.responseStatus as ContentfulStatusCode, body: JSON.parse(prior.responseBody ?? "null"), replayed: true };
  }

  let response: IdempotentResponse;
  try {
    response = await work();
  } catch (err) {
    await db.delete(idempotencyKeys).where(where);
    throw err;
  }
  await db
    .update(idempotencyKeys)
    .set({ responseStatus: response.status, responseBody: JSON.stringify(response.body) })
    .where(where);
  return { ...response, replayed: false };
}
