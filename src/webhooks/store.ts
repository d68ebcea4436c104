// Webhook endpoints in D1: the signing secret sealed with SecretBox (AAD binds organization and endpoint), rows
// always looked up with their organization so another organization's endpoint is simply not found.
import { and, eq, sql } from "drizzle-orm";
import { webhookEndpoints } from "../db/schema";
import { auditStatement, type Actor } from "../lib/audit";
import type { Db } from "../lib/db";
import { newestFirst } from "../lib/pagination";
import { notFound } from "../lib/errors";
import { SecretBox, type Envelope } from "../lib/secret-box";
import { isoNow } from "../lib/clock";
import { newSigningSecret } from "./signing";

export type EndpointRow = typeof webhookEndpoints.$inferSelect;

const aad = (orgId: number, endpointId: number) => `edgedial/webhooks/${orgId}/${endpointId}`;

export async function openSecret(env: { ENCRYPTION_KEYS?: string }, row: EndpointRow): Promise<string> {
  return SecretBox.fromEnv(env).decrypt(row.secret, aad(row.orgId, row.id));
}

async function sealed(env: { ENCRYPTION_KEYS?: string }, orgId: number, endpointId: number) {
  const secret = newSigningSecret();
  const envelope: Envelope = await SecretBox.fromEnv(env).encrypt(secret, aad(orgId, endpointId));
  return { secret, envelope, last4: secret.slice(-4) };
}

export async function getEndpoint(db: Db, orgId: number, id: number): Promise<EndpointRow> {
  const row = await db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, orgId)))
    .get();
  if (!row) throw notFound("Webhook endpoint");
  return row;
}

type NewEndpoint = { url: string; events: string[]; description?: string | null };

/**
 * Creates an endpoint and returns it with its secret in plaintext (shown once). The AAD needs the row's id, so the
 * row is inserted disabled with no secret first; emitEvent skips it until the second write seals the secret.
 */
export async function createEndpoint(env: Env, db: Db, actor: Actor, input: NewEndpoint): Promise<{ row: EndpointRow; secret: string }> {
  const placeholder = { kid: "", iv: "", ct: "" };
  const draft = await db
    .insert(webhookEndpoints)
    .values({
      orgId: actor.orgId,
      url: input.url,
      events: input.events,
      description: input.description ?? null,
      enabled: false,
      secret: placeholder,
      secretLast4: "",
    })
    .returning()
    .get();
  try {
    const { secret, envelope, last4 } = await sealed(env, actor.orgId, draft.id);
    const [[row]] = await db.batch([
      db.update(webhookEndpoints).set({ secret: envelope, secretLast4: last4, enabled: true }).where(eq(webhookEndpoints.id, draft.id)).returning(),
      auditStatement(db, actor, {
        action: "create",
        resourceType: "webhook_endpoint",
        resourceId: draft.id,
        summary: { url: input.url, events: input.events },
      }),
    ]);
    return { row, secret };
  } catch (err) {
    await db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, draft.id));
    throw err;
  }
}

export function listEndpoints(db: Db, orgId: number, before: number | null, limit: number) {
  return newestFirst(db.select().from(webhookEndpoints).$dynamic(), webhookEndpoints.id, before, limit, eq(webhookEndpoints.orgId, orgId)).all();
}

export type EndpointPatch = { url?: string; events?: string[]; enabled?: boolean; description?: string | null };

export async function updateEndpoint(db: Db, actor: Actor, id: number, patch: EndpointPatch): Promise<EndpointRow> {
  const set = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as EndpointPatch;
  const [[row]] = await db.batch([
    db
      .update(webhookEndpoints)
      .set({ ...set, updatedAt: isoNow() })
      .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, actor.orgId)))
      .returning(),
    auditStatement(db, actor, { action: "update", resourceType: "webhook_endpoint", resourceId: id, summary: { fields: Object.keys(set) } }),
  ]);
  if (!row) throw notFound("Webhook endpoint");
  return row;
}

export async function deleteEndpoint(db: Db, actor: Actor, id: number): Promise<void> {
  const mine = and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, actor.orgId));
  const [, gone] = await db.batch([
    // Placed before the delete so it can still read the row's url.
    auditStatement(
      db,
      actor,
      {
        action: "delete",
        resourceType: "webhook_endpoint",
        resourceId: id,
        summary: sql`(SELECT json_object('url', url) FROM webhook_endpoints WHERE id = ${id} AND org_id = ${actor.orgId})`,
      },
      sql`EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ${id} AND org_id = ${actor.orgId})`,
    ),
    db.delete(webhookEndpoints).where(mine).returning({ id: webhookEndpoints.id }),
  ]);
  if (gone.length === 0) throw notFound("Webhook endpoint");
}

/** A new secret replaces the old one at once; the new one is returned in plaintext (shown once). */
export async function rotateSecret(env: Env, db: Db, actor: Actor, id: number): Promise<{ row: EndpointRow; secret: string }> {
  await getEndpoint(db, actor.orgId, id);
  const { secret, envelope, last4 } = await sealed(env, actor.orgId, id);
  const [[row]] = await db.batch([
    db
      .update(webhookEndpoints)
      .set({ secret: envelope, secretLast4: last4, updatedAt: isoNow() })
      .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, actor.orgId)))
      .returning(),
    auditStatement(db, actor, { action: "update", resourceType: "webhook_endpoint", resourceId: id, summary: { fields: ["secret"] } }),
  ]);
  if (!row) throw notFound("Webhook endpoint");
  return { row, secret };
}
