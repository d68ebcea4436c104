// The events an endpoint can subscribe to, and the envelope every delivery carries (Standard Webhooks' shape).
import { z } from "@hono/zod-openapi";

export const WebhookEvent = z.enum(["run.completed", "campaign.state_changed", "campaign.completed"]).openapi("WebhookEvent", {
  description:
    "`run.completed`: a call reached a final status. `campaign.state_changed`: a campaign moved between states. `campaign.completed`: a campaign finished all its contacts.",
});
export type WebhookEventType = z.infer<typeof WebhookEvent>;

/** The body of a delivery: `{type, timestamp, data}`. */
export type WebhookPayload = { type: WebhookEventType; timestamp: string; data: Record<string, unknown> };

/** What one queue message carries: the delivery row to send (its body and webhook-id are in D1). */
export type DeliveryMessage = { deliveryId: number };
