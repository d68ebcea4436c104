// GET|PUT /organizations/data-policy: how long the organization keeps its calls' data (the purge applies it,
// purge.ts) and whether stored transcripts are redacted. Both live in its calling_policies row.
import { createRoute, z } from "@hono/zod-openapi";
import { eq, sql } from "drizzle-orm";
import { callingPolicies } from "../db/schema";
import { createRouter } from "../lib/app";
import { actorOf, auditStatement } from "../lib/audit";
import { isoNow } from "../lib/clock";
import { getDb } from "../lib/db";
import { errors, json } from "../lib/schemas";
import { MAX_RETENTION_DAYS, Retention, retentionDays } from "../workflows/retention";

const PATH = "/organizations/data-policy";

const days = (what: string) =>
  z
    .number()
    .int()
    .nullable()
    .openapi({ description: `${what}; null = forever` });

const DataPolicy = z
  .object({
    retention: z
      .object({
        recordings_days: days("Days recordings are kept"),
        transcripts_days: days("Days transcripts, tool calls, gathered context and analysis are kept"),
        runs_days: days("Days runs are kept at all"),
      })
      .openapi({ description: "Counted from each run's creation; an agent's workflow_configurations.retention overrides a kind" }),
    redact_pii: z.boolean().openapi({ description: "Whether stored transcripts and results are redacted of personal data" }),
    updated_at: z.string().nullable(),
  })
  .openapi("DataPolicy");

const UpdateDataPolicy = z
  .strictObject({
    retention: Retention.nullable()
      .optional()
      .openapi({
        description: `Replaces the whole retention: kinds left out or null keep data forever; null keeps everything forever. At most ${MAX_RETENTION_DAYS} days.`,
      }),
    redact_pii: z
      .boolean()
      .optional()
      .openapi({ description: "Redact personal data (card numbers, emails, phone numbers, sensitive variables) from stored transcripts" }),
  })
  .openapi("UpdateDataPolicy");

const about =
  "A daily purge deletes what expired, from finished calls only: a recording past recordings_days (the audio and its link), the transcript and details past transcripts_days, the whole run past runs_days (with its webhook node deliveries). Each purge leaves one audit entry (action `purge`) with the counts. See docs/retention.md.";

const get = createRoute({
  method: "get",
  path: PATH,
  tags: ["organizations"],
  summary: "The organization's data policy: retention and transcript redaction",
  description: about,
  responses: { 200: json(DataPolicy), ...errors(401) },
});

const put = createRoute({
  method: "put",
  path: PATH,
  tags: ["organizations"],
  summary: "Change the data policy (fields left out keep their value)",
  description: about,
  request: { body: { content: { "application/json": { schema: UpdateDataPolicy } }, required: true } },
  responses: { 200: json(DataPolicy), ...errors(401, 422) },
});

async function load(env: Env, orgId: number) {
  const row = await getDb(env)
    .select({ retention: callingPolicies.retention, redactPii: callingPolicies.redactPii, updatedAt: callingPolicies.updatedAt })
    .from(callingPolicies)
    .where(eq(callingPolicies.orgId, orgId))
    .get();
  return { retention: retentionDays(row?.retention), redact_pii: row?.redactPii ?? false, updated_at: row?.updatedAt ?? null };
}

export const dataPolicyRouter = createRouter()
  .openapi(get, async (c) => c.json(await load(c.env, c.get("orgId")), 200))
  .openapi(put, async (c) => {
    const body = c.req.valid("json");
    const orgId = c.get("orgId");
    const db = getDb(c.env);
    // Stored with every kind present (null = forever), or null when nothing expires.
    const retention = body.retention === undefined ? undefined : body.retention && retentionDays(body.retention);
    const stored = retention && Object.values(retention).some((v) => v != null) ? retention : null;
    const set = {
      ...(retention !== undefined ? { retention: stored } : {}),
      ...(body.redact_pii !== undefined ? { redactPii: body.redact_pii } : {}),
      updatedAt: isoNow(),
    };
    const fields = Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined);
    await db.batch([
      db
        .insert(callingPolicies)
        .values({ orgId, ...set })
        .onConflictDoUpdate({ target: callingPolicies.orgId, set }),
      auditStatement(
        db,
        actorOf(c),
        { action: "update", resourceType: "data_policy", resourceId: orgId, summary: { fields, ...(retention !== undefined ? { retention: stored } : {}) } },
        sql`1`,
      ),
    ]);
    return c.json(await load(c.env, orgId), 200);
  });
