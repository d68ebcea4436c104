// An agent's webhook nodes firing: each node's body becomes a delivery row under one of the organization's webhook
// endpoints (whose secret signs it and whose delivery log shows it, with the run, the node and the node's URL), then
// goes through the same queue, retries and URL policy as every event. Once per run and node, however often asked.
import { and, asc, eq } from "drizzle-orm";
import { webhookDeliveries, webhookEndpoints } from "../db/schema";
import { base64UrlEncode, randomBytes } from "../lib/crypto";
import { getDb } from "../lib/db";
import { enqueue } from "./deliveries";
import { NODE_DELIVERY_EVENT } from "./events";

export type NodeFiring = { nodeId: string; url: string; endpointId: number | null; body: string };
export type NodeDelivery = { nodeId: string; deliveryId: number | null; problem: string | null };

/**
 * Queues the nodes' bodies. The endpoint is the node's `webhook_endpoint_id` when it names one of the organization's,
 * else the organization's oldest enabled endpoint; without one a node is not sent and its problem says why.
 */
export async function queueNodeDeliveries(env: Env, orgId: number, runId: number, firings: NodeFiring[]): Promise<NodeDelivery[]> {
  if (!firings.length) return [];
  const db = getDb(env);
  const endpoints = await db
    .select({ id: webhookEndpoints.id, enabled: webhookEndpoints.enabled })
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.orgId, orgId))
    .orderBy(asc(webhookEndpoints.id))
    .all();
  const fallback = endpoints.find((e) => e.enabled)?.id ?? null;
  const sent = await db
    .select({ nodeId: webhookDeliveries.nodeId, id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.orgId, orgId), eq(webhookDeliveries.runId, runId)))
    .all();
  const already = new Map(sent.map((r) => [r.nodeId, r.id]));
  const out: NodeDelivery[] = [];
  const fresh: number[] = [];
  for (const f of firings) {
    const known = already.get(f.nodeId);
    if (known !== undefined) {
      out.push({ nodeId: f.nodeId, deliveryId: known, problem: null });
      continue;
    }
    const endpointId = f.endpointId ?? fallback;
    if (endpointId === null || !endpoints.some((e) => e.id === endpointId)) {
      const problem =
        f.endpointId === null
          ? "The organization has no enabled webhook endpoint to sign it with"
          : `Webhook endpoint ${f.endpointId} does not exist in this organization`;
      out.push({ nodeId: f.nodeId, deliveryId: null, problem });
      continue;
    }
    const row = await db
      .insert(webhookDeliveries)
      .values({
        orgId,
        endpointId,
        messageId: `msg_${base64UrlEncode(randomBytes(18))}`,
        event: NODE_DELIVERY_EVENT,
        payload: f.body,
        runId,
        nodeId: f.nodeId,
        url: f.url,
      })
      .returning({ id: webhookDeliveries.id })
      .get();
    fresh.push(row.id);
    out.push({ nodeId: f.nodeId, deliveryId: row.id, problem: null });
  }
  if (fresh.length) await enqueue(env, db, fresh);
  return out;
}
