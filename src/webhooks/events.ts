// The events an endpoint can subscribe to, and the envelope every delivery carries (Standard Webhooks' shape).
import { z } from "@hono/zod-openapi";

export const WebhookEvent = z
  .enum(["run.completed", "run.analyzed", "campaign.state_changed", "campaign.completed", "agent_test.finished"])
  .openapi("WebhookEvent", {
    description:
      "`run.completed`: a call reached a final status. `run.analyzed`: a call's post-call analysis is done (or failed; `analysis.status` says which). `campaign.state_changed`: a campaign moved between states. `campaign.completed`: a campaign finished all its contacts. `agent_test.finished`: an agent's test run (its suite or one scenario) finished (docs/agent-tests.md).",
  });
export type WebhookEventType = z.infer<typeof WebhookEvent>;

/** What a delivery row carries as its event: an event type, or an agent's webhook node firing (not subscribable). */
export const NODE_DELIVERY_EVENT = "agent.webhook_node";
export const DeliveryEvent = z.enum([...WebhookEvent.options, NODE_DELIVERY_EVENT]).openapi("WebhookDeliveryEvent", {
  description: "The event delivered; `agent.webhook_node` is an agent's webhook node, sent to the node's own URL",
});

/** The body of a delivery: `{type, timestamp, data}`. */
export type WebhookPayload = { type: WebhookEventType; timestamp: string; data: Record<string, unknown> };

/** What one queue message carries: the delivery row to send (its body and webhook-id are in D1). */
export type DeliveryMessage = { deliveryId: number };
