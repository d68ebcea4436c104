// Webhook endpoints and their delivery logs: /api/v1/webhooks.
import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../lib/app";
import { actorOf } from "../lib/audit";
import { getDb } from "../lib/db";
import { invalid } from "../lib/errors";
import { decodeCursor, pageOf, pageQuery, toPage } from "../lib/pagination";
import { errors, json, pathId } from "../lib/schemas";
import { localDevPattern } from "../lib/openapi";
import { type DeliveryRow, listDeliveries, redeliver } from "./deliveries";
import { DeliveryEvent, WebhookEvent } from "./events";
import { maskSigningSecret } from "./signing";
import { createEndpoint, deleteEndpoint, type EndpointRow, getEndpoint, listEndpoints, rotateSecret, updateEndpoint } from "./store";
import { webhookUrlProblem } from "./url-check";

// The scheme rule of url-check.ts as a pattern (leading blanks are trimmed, the scheme is case-insensitive); the
// address rules (no credentials, no private or metadata hosts) are checked at save and need a resolver, not a regex.
const Url = z
  .string()
  .trim()
  .min(1)
  .max(2048)
  .openapi({
    example: "https://example.com/hooks/edgedial",
    description:
      "https:// only (a 422 `url_refused` otherwise; so are credentials in the URL and private, loopback or metadata addresses). A local-development server (LOCAL_DEV) also takes http:// and local addresses, and the document it serves says so.",
    ...localDevPattern("^\\s*[Hh][Tt][Tt][Pp][Ss]://", "^\\s*[Hh][Tt][Tt][Pp][Ss]?://"),
  });
const Events = z.array(WebhookEvent).min(1).max(20);
const Description = z.string().trim().max(500).nullable();

const WebhookEndpoint = z
  .object({
    id: z.number().int(),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(WebhookEvent),
    enabled: z.boolean(),
    secret_masked: z.string().openapi({ description: "The signing secret's prefix and last four characters" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("WebhookEndpoint");
const WebhookEndpointWithSecret = WebhookEndpoint.extend({
  secret: z.string().openapi({ description: "The signing secret (`whsec_…`), shown only in this response" }),
}).openapi("WebhookEndpointWithSecret");
const WebhookDelivery = z
  .object({
    id: z.number().int(),
    message_id: z.string().openapi({ description: "The `webhook-id` header: the same on every retry and redelivery" }),
    event: DeliveryEvent,
    run_id: z.number().int().nullable().openapi({ description: "An agent's webhook node: the run it fired for" }),
    node_id: z.string().nullable().openapi({ description: "An agent's webhook node: its id in the agent's definition" }),
    url: z.string().nullable().openapi({ description: "An agent's webhook node: where it was sent (null: the endpoint's URL)" }),
    status: z.enum(["pending", "succeeded", "failed"]),
    attempts: z.number().int(),
    last_response_status: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("WebhookDelivery");

const CreateWebhook = z.strictObject({ url: Url, events: Events, description: Description.optional() }).openapi("CreateWebhookEndpoint");
const UpdateWebhook = z
  .strictObject({ url: Url.optional(), events: Events.optional(), enabled: z.boolean().optional(), description: Description.optional() })
  .openapi("UpdateWebhookEndpoint");

const endpointParam = z.object({ webhook_id: pathId("webhook_id", "Webhook endpoint") });
const deliveryParams = z.object({ webhook_id: pathId("webhook_id", "Webhook endpoint"), delivery_id: pathId("delivery_id", "Webhook delivery") });

const tags = ["webhooks"];
const body = <T extends z.ZodTypeAny>(schema: T) => ({ body: { content: { "application/json": { schema } }, required: true } });

const create = createRoute({
  method: "post",
  path: "/webhooks",
  tags,
  summary: "Subscribe an endpoint to events (the signing secret is shown only in this response)",
  request: body(CreateWebhook),
  responses: { 201: json(WebhookEndpointWithSecret, "Created"), ...errors(401, 422, 503) },
});
const list = createRoute({
  method: "get",
  path: "/webhooks",
  tags,
  summary: "List the organization's webhook endpoints",
  request: { query: pageQuery },
  responses: { 200: json(pageOf(WebhookEndpoint)), ...errors(401, 422) },
});
const read = createRoute({
  method: "get",
  path: "/webhooks/{webhook_id}",
  tags,
  summary: "A webhook endpoint",
  request: { params: endpointParam },
  responses: { 200: json(WebhookEndpoint), ...errors(401, 404) },
});
const update = createRoute({
  method: "patch",
  path: "/webhooks/{webhook_id}",
  tags,
  summary: "Change an endpoint's URL, events, description or enabled flag",
  request: { params: endpointParam, ...body(UpdateWebhook) },
  responses: { 200: json(WebhookEndpoint), ...errors(401, 404, 422) },
});
const remove = createRoute({
  method: "delete",
  path: "/webhooks/{webhook_id}",
  tags,
  summary: "Delete an endpoint and its delivery log",
  request: { params: endpointParam },
  responses: { 204: { description: "Deleted" }, ...errors(401, 404) },
});
const rotate = createRoute({
  method: "post",
  path: "/webhooks/{webhook_id}/rotate-secret",
  tags,
  summary: "Replace the signing secret (the new one is shown only in this response; the old one stops at once)",
  request: { params: endpointParam },
  responses: { 200: json(WebhookEndpointWithSecret), ...errors(401, 404, 503) },
});
const deliveries = createRoute({
  method: "get",
  path: "/webhooks/{webhook_id}/deliveries",
  tags,
  summary: "The endpoint's delivery log, newest first",
  request: { params: endpointParam, query: pageQuery },
  responses: { 200: json(pageOf(WebhookDelivery)), ...errors(401, 404, 422) },
});
const resend = createRoute({
  method: "post",
  path: "/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver",
  tags,
  summary: "Send a delivery again: the same body and webhook-id",
  request: { params: deliveryParams },
  responses: { 202: json(WebhookDelivery, "Queued"), ...errors(401, 404) },
});

const view = (r: EndpointRow) => ({
  id: r.id,
  url: r.url,
  description: r.description,
  events: r.events as z.infer<typeof WebhookEvent>[],
  enabled: r.enabled,
  secret_masked: maskSigningSecret(r.secretLast4),
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});
const deliveryView = (d: DeliveryRow) => ({
  id: d.id,
  message_id: d.messageId,
  event: d.event as z.infer<typeof DeliveryEvent>,
  run_id: d.runId,
  node_id: d.nodeId,
  url: d.url,
  status: d.status as "pending" | "succeeded" | "failed",
  attempts: d.attempts,
  last_response_status: d.lastResponseStatus,
  last_error: d.lastError,
  created_at: d.createdAt,
  updated_at: d.updatedAt,
});

function checkUrl(env: Env, url: string): void {
  const problem = webhookUrlProblem(env, url);
  if (problem) throw invalid(["body", "url"], problem, "url_refused", url);
}

/** The events once each, in the order given. */
const unique = <T>(xs: T[]) => [...new Set(xs)];

export const webhooksRouter = createRouter()
  .openapi(create, async (c) => {
    const input = c.req.valid("json");
    checkUrl(c.env, input.url);
    const { row, secret } = await createEndpoint(c.env, getDb(c.env), actorOf(c), { ...input, events: unique(input.events) });
    return c.json({ ...view(row), secret }, 201);
  })
  .openapi(list, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const rows = await listEndpoints(getDb(c.env), c.get("orgId"), decodeCursor(cursor), limit);
    return c.json(toPage(rows, limit, view), 200);
  })
  .openapi(read, async (c) => {
    const { webhook_id } = c.req.valid("param");
    return c.json(view(await getEndpoint(getDb(c.env), c.get("orgId"), webhook_id)), 200);
  })
  .openapi(update, async (c) => {
    const { webhook_id } = c.req.valid("param");
    const patch = c.req.valid("json");
    if (patch.url !== undefined) checkUrl(c.env, patch.url);
    const row = await updateEndpoint(getDb(c.env), actorOf(c), webhook_id, { ...patch, events: patch.events && unique(patch.events) });
    return c.json(view(row), 200);
  })
  .openapi(remove, async (c) => {
    const { webhook_id } = c.req.valid("param");
    await deleteEndpoint(getDb(c.env), actorOf(c), webhook_id);
    return c.body(null, 204);
  })
  .openapi(rotate, async (c) => {
    const { webhook_id } = c.req.valid("param");
    const { row, secret } = await rotateSecret(c.env, getDb(c.env), actorOf(c), webhook_id);
    return c.json({ ...view(row), secret }, 200);
  })
  .openapi(deliveries, async (c) => {
    const { webhook_id } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    const db = getDb(c.env);
    const before = decodeCursor(cursor);
    await getEndpoint(db, c.get("orgId"), webhook_id);
    const rows = await listDeliveries(db, c.get("orgId"), webhook_id, before, limit);
    return c.json(toPage(rows, limit, deliveryView), 200);
  })
  .openapi(resend, async (c) => {
    const { webhook_id, delivery_id } = c.req.valid("param");
    const row = await redeliver(c.env, getDb(c.env), c.get("orgId"), webhook_id, delivery_id);
    return c.json(deliveryView(row), 202);
  });
