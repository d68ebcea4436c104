// GET /organizations/audit-log: who changed what in the organization, newest first (entries by src/lib/audit.ts).
import { createRoute, z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { apiKeys, auditLog } from "../db/schema";
import { createRouter } from "../lib/app";
import { AUDIT_ACTIONS, AUDIT_RESOURCES } from "../lib/audit";
import { getDb } from "../lib/db";
import { decodeCursor, newestFirst, pageOf, pageQuery, toPage } from "../lib/pagination";
import { errors, json } from "../lib/schemas";

const AuditEntry = z
  .object({
    id: z.number().int(),
    created_at: z.string(),
    action: z.string().openapi({ example: "update", description: `One of ${AUDIT_ACTIONS.join(", ")}` }),
    resource_type: z.string().openapi({
      example: "telephony_config",
      description: `One of ${AUDIT_RESOURCES.join(", ")} (for calling_policy, data_policy and run_data the id is the organization's)`,
    }),
    resource_id: z.number().int().nullable(),
    api_key_id: z.number().int().nullable().openapi({ description: "The key that made the change (null: made outside the API)" }),
    api_key_name: z.string().nullable(),
    api_key_last4: z.string().nullable(),
    summary: z.record(z.string(), z.unknown()).openapi({ description: "What changed, briefly (names, changed fields); never a secret" }),
  })
  .openapi("AuditEntry");

const list = createRoute({
  method: "get",
  path: "/organizations/audit-log",
  tags: ["organizations"],
  summary: "Who changed what: configurations, numbers, agents, campaigns and keys, newest first",
  request: { query: pageQuery },
  responses: { 200: json(pageOf(AuditEntry)), ...errors(401, 422, 429) },
});

export const auditLogRouter = createRouter().openapi(list, async (c) => {
  const { limit, cursor } = c.req.valid("query");
  const before = decodeCursor(cursor);
  const orgId = c.get("orgId");
  const query = getDb(c.env)
    .select({ entry: auditLog, keyName: apiKeys.name, keyLast4: apiKeys.keyLast4 })
    .from(auditLog)
    .leftJoin(apiKeys, and(eq(apiKeys.id, auditLog.apiKeyId), eq(apiKeys.orgId, orgId)))
    .$dynamic();
  const rows = await newestFirst(query, auditLog.id, before, limit, eq(auditLog.orgId, orgId)).all();
  const page = toPage(
    rows.map((r) => ({ ...r, id: r.entry.id })),
    limit,
    ({ entry: e, keyName, keyLast4 }) => ({
      id: e.id,
      created_at: e.createdAt,
      action: e.action,
      resource_type: e.resourceType,
      resource_id: e.resourceId,
      api_key_id: e.apiKeyId,
      api_key_name: keyName,
      api_key_last4: keyLast4,
      summary: e.summary ?? {},
    }),
  );
  return c.json(page, 200);
});
