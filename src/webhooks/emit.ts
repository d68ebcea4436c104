// Emitting an event: one delivery row per subscribed, enabled endpoint of the organization, then one queue message
// each. Callers (calls, campaigns) sit above this folder and import it; it imports only lib and db.
import { and, eq, sql } from "drizzle-orm";
import { webhookDeliveries, webhookEndpoints } from "../db/schema";
import { isoNow } from "../lib/clock";
import { base64UrlEncode, randomBytes } from "../lib/crypto";
import { getDb } from "../lib/db";
import { enqueue } from "./deliveries";
import type { WebhookEventType, WebhookPayload } from "./events";
import { log } from "../lib/log";

/** A Standard Webhooks message id: unique per event and endpoint, kept across retries and redeliveries. */
const messageId = () => `msg_${base64UrlEncode(randomBytes(18))}`;

const ROWS_PER_INSERT = 15;

/** Sends `type` with `data` to every endpoint of `orgId` subscribed to it; returns the delivery ids. */
export async function emitEvent(env: Env, orgId: number, type: WebhookEventType, data: Record<string, unknown>): Promise<number[]> {
  const db = getDb(env);
  const endpoints = await db
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.orgId, orgId),
        eq(webhookEndpoints.enabled, true),
        sql`EXISTS (SELECT 1 FROM json_each(${webhookEndpoints.events}) WHERE value = ${type})`,
      ),
    )
    .all();
  if (endpoints.length === 0) return [];
  const payload: WebhookPayload = { type, timestamp: isoNow(), data };
  const body = JSON.stringify(payload);
  const values = endpoints.map((e) => ({ orgId, endpointId: e.id, messageId: messageId(), event: type, payload: body }));
  // D1 binds at most 100 parameters per statement: a few rows per insert, all in one batch.
  const inserts = [];
  for (let i = 0; i < values.length; i += ROWS_PER_INSERT) {
    inserts.push(
      db
        .insert(webhookDeliveries)
        .values(values.slice(i, i + ROWS_PER_INSERT))
        .returning({ id: webhookDeliveries.id }),
    );
  }
  const results = await db.batch(inserts as [(typeof inserts)[number], ...(typeof inserts)[number][]]);
  const ids = results.flat().map((r) => r.id);
  await enqueue(env, db, ids);
  return ids;
}

/** emitEvent for callers whose own work must not fail with it (status processing, the campaign mirror): logs instead. */
export async function emitSafely(env: Env, orgId: number, type: WebhookEventType, data: Record<string, unknown>): Promise<void> {
  try {
    await emitEvent(env, orgId, type, data);
  } catch (err) {
    log("error", "webhook_emit_failed", { org_id: orgId, type, error: String(err) });
  }
}
