// The queue consumer: sends each delivery, signed, to its endpoint. A failure is retried by the queue after an
// exponential delay (per message), up to MAX_ATTEMPTS; then the delivery is marked failed.
import { eq } from "drizzle-orm";
import { webhookDeliveries, webhookEndpoints } from "../db/schema";
import { clock } from "../lib/clock";
import { getDb } from "../lib/db";
import { recordAttempt } from "./deliveries";
import type { DeliveryMessage } from "./events";
import { signedHeaders } from "./signing";
import { openSecret } from "./store";
import { webhookUrlProblem } from "./url-check";
import { log } from "../lib/log";

export const MAX_ATTEMPTS = 8;
const BASE_DELAY_SECONDS = 10;
const MAX_DELAY_SECONDS = 3600;
/** A receiver that has not answered by then counts as failed (and is retried). */
const TIMEOUT_MS = 10_000;

/** The wait before attempt `attempt + 1`: 10 s, 20 s, 40 s, … capped at an hour. */
export const backoffSeconds = (attempt: number) => Math.min(MAX_DELAY_SECONDS, BASE_DELAY_SECONDS * 2 ** Math.max(0, attempt - 1));

export type Fetcher = (request: Request) => Promise<Response>;

type Outcome = { done: true } | { done: false; error: string; responseStatus: number | null };

async function attempt(env: Env, deliveryId: number, fetcher: Fetcher): Promise<Outcome> {
  const db = getDb(env);
  const found = await db
    .select()
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(eq(webhookDeliveries.id, deliveryId))
    .get();
  // The endpoint was deleted (its deliveries with it), or the delivery already went through.
  if (!found || found.webhook_deliveries.status === "succeeded") return { done: true };
  const { webhook_deliveries: d, webhook_endpoints: endpoint } = found;
  const refuse = async (error: string) => {
    await recordAttempt(db, d.id, { status: "failed", responseStatus: null, error });
    return { done: true } as const;
  };
  if (!endpoint.enabled) return refuse("Endpoint disabled");
  // An agent's webhook node goes to its own URL, signed with the endpoint's secret.
  const url = d.url ?? endpoint.url;
  const problem = webhookUrlProblem(env, url);
  if (problem) return refuse(`URL refused: ${problem}`);

  const secret = await openSecret(env, endpoint);
  const headers = await signedHeaders(secret, d.messageId, Math.floor(clock.now() / 1000), d.payload);
  let res: Response;
  try {
    // Redirects are not followed: the target would escape the URL check.
    res = await fetcher(
      new Request(url, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "edgedial-webhooks/1", ...headers },
        body: d.payload,
        redirect: "manual",
        signal: AbortSignal.timeout(TIMEOUT_MS),
      }),
    );
  } catch (err) {
    return { done: false, error: `Request failed: ${String(err)}`, responseStatus: null };
  }
  await res.body?.cancel();
  if (res.status >= 200 && res.status < 300) {
    await recordAttempt(db, d.id, { status: "succeeded", responseStatus: res.status, error: null });
    return { done: true };
  }
  return { done: false, error: `Endpoint answered ${res.status}`, responseStatus: res.status };
}

async function deliverOne(env: Env, message: Message<unknown>, fetcher: Fetcher): Promise<void> {
  // Anything else on the queue is not ours to retry.
  const id = (message.body as Partial<DeliveryMessage> | null)?.deliveryId;
  if (typeof id !== "number" || !Number.isInteger(id)) return message.ack();
  const outcome = await attempt(env, id, fetcher);
  if (outcome.done) return message.ack();
  const last = message.attempts >= MAX_ATTEMPTS;
  await recordAttempt(getDb(env), id, { status: last ? "failed" : "pending", responseStatus: outcome.responseStatus, error: outcome.error });
  if (last) message.ack();
  else message.retry({ delaySeconds: backoffSeconds(message.attempts) });
}

/** The Worker's queue handler. `fetcher` is the outbound fetch (tests pass a recording one). */
export async function deliverWebhooks(batch: MessageBatch<unknown>, env: Env, fetcher: Fetcher = (r) => fetch(r)): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      try {
        await deliverOne(env, message, fetcher);
      } catch (err) {
        // Our own failure (D1, a secret that does not open): the queue tries again later.
        log("error", "webhook_delivery_error", { delivery_id: (message.body as Partial<DeliveryMessage> | null)?.deliveryId, error: String(err) });
        message.retry({ delaySeconds: backoffSeconds(message.attempts) });
      }
    }),
  );
}
