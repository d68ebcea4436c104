// Organization API keys: create (shown once), list (never the key), revoke.
import { createRoute, z } from "@hono/zod-openapi";
import { and, eq, isNull, sql } from "drizzle-orm";
import { apiKeys } from "../db/schema";
import { createRouter } from "../lib/app";
import { actorOf, auditStatement } from "../lib/audit";
import { getDb } from "../lib/db";
import { forgetKey } from "../lib/key-cache";
import { notFound } from "../lib/errors";
import { decodeCursor, newestFirst, pageOf, pageQuery, toPage } from "../lib/pagination";
import { errors, idParam, json } from "../lib/schemas";
import { newApiKey } from "./api-keys";

const ApiKey = z
  .object({
    id: z.number().int(),
    name: z.string(),
    key_last4: z.string(),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
    last_used_at: z.string().nullable().openapi({ description: "When the key last authenticated a request (to within about a minute)" }),
  })
  .openapi("ApiKey");
const CreatedApiKey = z
  .object({ id: z.number().int(), name: z.string(), key: z.string(), key_last4: z.string(), created_at: z.string() })
  .openapi("CreatedApiKey");
const CreateApiKey = z.strictObject({ name: z.string().trim().min(1).max(100) }).openapi("CreateApiKey");

const tags = ["organizations"];

const create = createRoute({
  method: "post",
  path: "/organizations/api-keys",
  tags,
  summary: "Create an API key (the key is shown only in this response)",
  request: { body: { content: { "application/json": { schema: CreateApiKey } }, required: true } },
  responses: { 200: json(CreatedApiKey), ...errors(401, 422) },
});

const list = createRoute({
  method: "get",
  path: "/organizations/api-keys",
  tags,
  summary: "List the organization's active API keys",
  request: { query: pageQuery },
  responses: { 200: json(pageOf(ApiKey)), ...errors(401, 422) },
});

const revoke = createRoute({
  method: "delete",
  path: "/organizations/api-keys/{key_id}",
  tags,
  summary: "Revoke an API key (effective within 10 seconds)",
  request: { params: idParam("key_id") },
  responses: { 200: json(ApiKey), ...errors(401, 404, 422) },
});

type Row = typeof apiKeys.$inferSelect;
const view = (r: Row) => ({ id: r.id, name: r.name, key_last4: r.keyLast4, created_at: r.createdAt, revoked_at: r.revokedAt, last_used_at: r.lastUsedAt });

export const apiKeysRouter = createRouter()
  .openapi(create, async (c) => {
    const { name } = c.req.valid("json");
    const { key, hash, last4 } = await newApiKey();
    const db = getDb(c.env);
    const [[row]] = await db.batch([
      db
        .insert(apiKeys)
        .values({ orgId: c.get("orgId"), name, keyHash: hash, keyLast4: last4 })
        .returning(),
      auditStatement(db, actorOf(c), {
        action: "create",
        resourceType: "api_key",
        resourceId: sql`(SELECT id FROM api_keys WHERE key_hash = ${hash})`,
        summary: { name, key_last4: last4 },
      }),
    ]);
    return c.json({ id: row.id, name: row.name, key, key_last4: row.keyLast4, created_at: row.createdAt }, 200);
  })
  .openapi(list, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const before = decodeCursor(cursor);
    const query = getDb(c.env).select().from(apiKeys).$dynamic();
    const rows = await newestFirst(query, apiKeys.id, before, limit, eq(apiKeys.orgId, c.get("orgId")), isNull(apiKeys.revokedAt)).all();
    return c.json(toPage(rows, limit, view), 200);
  })
  .openapi(revoke, async (c) => {
    const { key_id } = c.req.valid("param");
    const db = getDb(c.env);
    const [[row]] = await db.batch([
      db
        .update(apiKeys)
        .set({ revokedAt: new Date().toISOString() })
        .where(and(eq(apiKeys.id, key_id), eq(apiKeys.orgId, c.get("orgId")), isNull(apiKeys.revokedAt)))
        .returning(),
      auditStatement(db, actorOf(c), {
        action: "revoke",
        resourceType: "api_key",
        resourceId: key_id,
        summary: sql`(SELECT json_object('name', name, 'key_last4', key_last4) FROM api_keys WHERE id = ${key_id})`,
      }),
    ]);
    if (!row) throw notFound("API key");
    // At once in this isolate; other isolates drop it when their entry expires (KEY_CACHE_TTL_MS).
    forgetKey(row.keyHash);
    return c.json(view(row), 200);
  });
