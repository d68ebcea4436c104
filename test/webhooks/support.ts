// Webhook test support: an endpoint made through the API, an env whose queue records what is sent, a fake
// MessageBatch that records acks and retries, and a receiver that records requests and answers as scripted.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call, type Org } from "../helpers";

export const HOOK_URL = "https://hooks.example.com/edgedial";

export async function createEndpoint(org: Org, body: Record<string, unknown> = {}) {
  const res = await call("POST", "/api/v1/webhooks", { key: org.key, body: { url: HOOK_URL, events: ["run.completed"], ...body } });
  expect(res.status, res.text).toBe(201);
  return res.json as { id: number; url: string; events: string[]; secret: string; secret_masked: string; enabled: boolean };
}

/** The real bindings, but WEBHOOKS only records the messages sent to it. */
export function recordingEnv() {
  const sent: { deliveryId: number }[] = [];
  const WEBHOOKS = {
    send: async (body: { deliveryId: number }) => void sent.push(body),
    sendBatch: async (msgs: { body: { deliveryId: number } }[]) => void sent.push(...msgs.map((m) => m.body)),
  };
  return { env: { ...env, WEBHOOKS } as unknown as Env, sent };
}

export type QueueLog = { acked: number[]; retried: { id: number; delaySeconds?: number }[] };

/** A batch as the queue would hand it over, each message on its `attempts`-th delivery. */
export function fakeBatch(ids: number[], attempts = 1): { batch: MessageBatch<unknown>; log: QueueLog } {
  const log: QueueLog = { acked: [], retried: [] };
  const messages = ids.map((deliveryId, i) => ({
    id: `m${i}`,
    timestamp: new Date(),
    body: { deliveryId },
    attempts,
    ack: () => void log.acked.push(deliveryId),
    retry: (o?: { delaySeconds?: number }) => void log.retried.push({ id: deliveryId, delaySeconds: o?.delaySeconds }),
  }));
  return { batch: { queue: "edgedial-webhooks", messages, ackAll() {}, retryAll() {} } as unknown as MessageBatch<unknown>, log };
}

export type Received = { url: string; headers: Record<string, string>; body: string };

/** A receiver that answers `statuses` in turn (the last one repeats). */
export function receiver(...statuses: number[]) {
  const received: Received[] = [];
  const fetcher = async (req: Request) => {
    received.push({ url: req.url, headers: Object.fromEntries(req.headers), body: await req.text() });
    const status = statuses[Math.min(received.length - 1, statuses.length - 1)] ?? 200;
    return new Response(status === 204 ? null : "ok", { status });
  };
  return { fetcher, received };
}

export const deliveryRow = (id: number) =>
  env.DB.prepare("SELECT * FROM webhook_deliveries WHERE id = ?").bind(id).first<{
    status: string;
    attempts: number;
    last_response_status: number | null;
    last_error: string | null;
    message_id: string;
    payload: string;
  }>();
