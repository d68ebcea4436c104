// Delivery rows: one event for one endpoint, its stored body and webhook-id, and how sending it went.
import { and, eq, sql } from "drizzle-orm";
import { webhookDeliveries } from "../db/schema";
import { isoNow } from "../lib/clock";
import type { Db } from "../lib/db";
import { notFound } from "../lib/errors";
import { newestFirst } from "../lib/pagination";
import type { DeliveryMessage } from "./events";

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type DeliveryStatus = "pending" | "succeeded" | "failed";

/** A Queue's sendBatch takes at most 100 messages. */
const SEND_BATCH_MAX = 100;

/** Queues the deliveries; if the queue refuses, they are marked failed (a redelivery can send them later). */
export async function enqueue(env: Env, db: Db, ids: number[]): Promise<void> {
  const queue = env.WEBHOOKS as Queue<DeliveryMessage>;
  try {
    for (let i = 0; i < ids.length; i += SEND_BATCH_MAX) {
      await queue.sendBatch(ids.slice(i, i + SEND_BATCH_MAX).map((deliveryId) => ({ body: { deliveryId } })));
    }
  } catch (err) {
    for (const id of ids) {
      await db
        .update(webhookDeliveries)
        .set({ status: "failed", lastError: `Could not be queued: ${String(err)}`.slice(0, 500), updatedAt: isoNow() })
        .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, "pending")));
    }
    throw err;
  }
}

export function listDeliveries(db: Db, orgId: number, endpointId: number, before: number | null, limit: number) {
  const query = db.select().from(webhookDeliveries).$dynamic();
  return newestFirst(query, webhookDeliveries.id, before, limit, eq(webhookDeliveries.orgId, orgId), eq(webhookDeliveries.endpointId, endpointId)).all();
}

/** Puts a delivery back to pending and queues it again: the same body and webhook-id, a fresh round of attempts. */
export async function redeliver(env: Env, db: Db, orgId: number, endpointId: number, id: number): Promise<DeliveryRow> {
  const row = await db
    .update(webhookDeliveries)
    .set({ status: "pending", updatedAt: isoNow() })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.orgId, orgId)))
    .returning()
    .get();
  if (!row) throw notFound("Webhook delivery");
  await enqueue(env, db, [row.id]);
  return row;
}

export async function recordAttempt(
  db: Db,
  id: number,
  outcome: { status: DeliveryStatus; responseStatus: number | null; error: string | null },
): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({
      status: outcome.status,
      attempts: sql`${webhookDeliveries.attempts} + 1`,
      lastResponseStatus: outcome.responseStatus,
      lastError: outcome.error?.slice(0, 500) ?? null,
      updatedAt: isoNow(),
    })
    .where(eq(webhookDeliveries.id, id));
}
