// A `webhook` node's own fields beside its `url` (which validate.ts checks): when it fires, the JSON body it sends
// (`payload_template`, `{{path}}` placeholders filled from the call) and the webhook endpoint that signs it. Pure.
import { isObject, type Obj } from "../lib/helpers";
import { checkOutboundUrl } from "../lib/url-guard";

export const WEBHOOK_WHEN = ["after_call"] as const;
export type WebhookNode = { id: string; url: string; when: "after_call"; payloadTemplate: unknown; endpointId: number | null };

/**
 * Why the service may not post to a webhook node's `url`, or null: http or https, and never a metadata, link-local,
 * private or loopback address (SSRF; the organization's private-PBX switch does not apply to webhooks). Checked at save
 * (a 422), by validation, and again before every delivery.
 */
export function webhookNodeUrlProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "data.url must be an http or https URL";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return "data.url must be an http or https URL";
  const verdict = checkOutboundUrl(url);
  if (verdict.ok) return null;
  const why = verdict.message.replace(/ unless the organization allows private PBX addresses$/, "");
  return `data.url ${why.charAt(0).toLowerCase()}${why.slice(1)}`;
}

/** The node's problems beyond its url, as [field, message]. */
export function webhookNodeProblems(data: Obj): [string, string][] {
  const out: [string, string][] = [];
  if (data.when !== undefined && data.when !== null && !(WEBHOOK_WHEN as readonly unknown[]).includes(data.when)) {
    out.push(["data.when", `data.when must be one of: ${WEBHOOK_WHEN.join(", ")}`]);
  }
  const t = data.payload_template;
  if (t !== undefined && t !== null && !isObject(t) && !Array.isArray(t))
    out.push(["data.payload_template", "data.payload_template must be a JSON object or list"]);
  const e = data.webhook_endpoint_id;
  if (e !== undefined && e !== null && !(typeof e === "number" && Number.isSafeInteger(e) && e > 0)) {
    out.push(["data.webhook_endpoint_id", "data.webhook_endpoint_id must be a webhook endpoint's id (a positive integer)"]);
  }
  return out;
}

/** The definition's usable webhook nodes (an invalid one is skipped: the agent's validation reports it). */
export function webhookNodesOf(definition: unknown): WebhookNode[] {
  if (!isObject(definition) || !Array.isArray(definition.nodes)) return [];
  const out: WebhookNode[] = [];
  for (const n of definition.nodes) {
    if (!isObject(n) || n.type !== "webhook" || typeof n.id !== "string" || !isObject(n.data)) continue;
    const d = n.data;
    if (typeof d.url !== "string" || !d.url.trim() || webhookNodeProblems(d).length) continue;
    out.push({
      id: n.id,
      url: d.url.trim(),
      when: "after_call",
      payloadTemplate: d.payload_template ?? null,
      endpointId: typeof d.webhook_endpoint_id === "number" ? d.webhook_endpoint_id : null,
    });
  }
  return out;
}
