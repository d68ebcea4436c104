// An agent's HTTP tools (`workflow_definition.tools`): their schema, and their header values sealed like telephony
// secrets. A header's value is stored as an envelope with its mask, shown only as the mask, and opened only for a
// call. Sending the mask back keeps the stored value, but only for the same tool, header and URL origin (a secret is
// never sent to an address it was not given for).
import { z } from "@hono/zod-openapi";
import { ApiError, type ValidationItem } from "../lib/errors";
import { isObject, type Obj } from "../lib/helpers";
import { classifySecretInput, maskSecret } from "../lib/mask";
import { type Envelope, isEnvelope, type SecretBox } from "../lib/secret-box";
import { checkOutboundUrl } from "../lib/url-guard";

export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
/** Tool names the agent gives its own tools (an HTTP tool may not take them). */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set(["end_call", "transfer_call", "send_dtmf"]);
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Keys a DTMF string may hold: digits, *, #, A-D, and `w` (wait half a second). */
export const DTMF_KEYS = /^[0-9*#A-Dw]{1,32}$/;
export const MAX_TOOLS = 32;
export const MAX_TOOL_TIMEOUT_MS = 20_000;
/** Headers the runtime or the request's own framing sets; a tool may not. */
const FORBIDDEN_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer", "keep-alive", "cookie2"]);

const HeaderName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, "Must be an HTTP header name")
  .refine((n) => !FORBIDDEN_HEADERS.has(n.toLowerCase()), { message: "This header is set by the request itself" });

export const HttpToolSchema = z
  .strictObject({
    name: z
      .string()
      .regex(TOOL_NAME, "Letters, digits, '_' and '-' (at most 64)")
      .refine((n) => !RESERVED_TOOL_NAMES.has(n), { message: "end_call, transfer_call and send_dtmf are the agent's own tools" }),
    description: z.string().max(2000).optional().openapi({ description: "When the model should call it" }),
    parameters: z
      .looseObject({
        type: z.literal("object"),
        properties: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
        required: z.array(z.string()).optional(),
      })
      .optional()
      .openapi({ description: "The arguments as a JSON Schema object (sent as the query for GET and DELETE, else as the JSON body)" }),
    url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .refine((u) => checkOutboundUrl(u, { allowPrivate: true, refuseSpecialUse: true }).ok, {
        message: "Must not point at metadata, link-local or reserved addresses, nor a special-use name (.test, .example, .invalid, .onion, .alt)",
      })
      .openapi({
        description:
          "Never this service itself, metadata, link-local or reserved addresses, or special-use names (refused at save). Checked against the organization's outbound-URL policy at every request, with the addresses the name resolves to (DNS over HTTPS); redirects are not followed",
      }),
    method: z.enum(HTTP_METHODS).optional().openapi({ description: "Default POST" }),
    headers: z
      .record(HeaderName, z.string().min(1).max(4096))
      .refine((h) => Object.keys(h).length <= 20, { message: "At most 20 headers" })
      .optional()
      .openapi({ description: "Sent with every request; values are stored encrypted and shown masked (send the mask back to keep one)" }),
    timeout_ms: z.int().min(100).max(MAX_TOOL_TIMEOUT_MS).optional().openapi({ description: "Default 5000" }),
    nodes: z.array(z.string().min(1).max(255)).max(500).optional().openapi({ description: "The node ids that offer it; absent or empty: every node" }),
  })
  .openapi("AgentHttpTool");

export const HttpTools = z
  .array(HttpToolSchema)
  .max(MAX_TOOLS)
  .superRefine((tools, ctx) => {
    const seen = new Set<string>();
    tools.forEach((t, i) => {
      if (seen.has(t.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `Another tool is already named ${t.name}` });
      seen.add(t.name);
    });
  })
  .openapi({ description: "HTTP tools the model may call during the call" });

type Sealed = Envelope & { mask: string };
const aad = (orgId: number, tool: string, header: string) => `edgedial/agent/${orgId}/tools/${tool}/headers/${header.toLowerCase()}`;
const origin = (url: unknown) => {
  try {
    return new URL(String(url)).origin;
  } catch {
    return null;
  }
};
const toolsOf = (definition: unknown): Obj[] =>
  isObject(definition) && Array.isArray(definition.tools) ? definition.tools.filter((t): t is Obj => isObject(t)) : [];

/** The definition to store: every tool header's value sealed (a value sent as its current mask keeps the stored one). */
export async function sealToolHeaders(box: () => SecretBox, orgId: number, definition: Obj, stored: unknown): Promise<Obj> {
  if (!Array.isArray(definition.tools) || !definition.tools.length) return definition;
  const before = new Map(toolsOf(stored).map((t) => [String(t.name), t]));
  const bad: ValidationItem[] = [];
  const tools: unknown[] = [];
  for (const [i, t] of definition.tools.entries()) {
    if (!isObject(t) || !isObject(t.headers)) {
      tools.push(t);
      continue;
    }
    const old = before.get(String(t.name));
    const sameOrigin = !!old && origin(old.url) !== null && origin(old.url) === origin(t.url);
    const oldHeaders = sameOrigin && isObject(old.headers) ? old.headers : {};
    const headers: Obj = {};
    for (const [name, value] of Object.entries(t.headers)) {
      const kept = Object.entries(oldHeaders).find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
      const oldSealed = isEnvelope(kept) ? (kept as Sealed) : null;
      if (isEnvelope(value)) {
        // Only a stored definition holds envelopes; one sent in is kept only where it is the stored value itself.
        if (oldSealed && JSON.stringify(oldSealed) === JSON.stringify(value)) headers[name] = oldSealed;
        else bad.push({ loc: ["body", "workflow_definition", "tools", i, "headers", name], msg: "Send the header's value itself", type: "value_error" });
        continue;
      }
      const verdict = classifySecretInput(String(value), oldSealed?.mask ?? null);
      if (verdict.kind === "keep") headers[name] = oldSealed;
      else if (verdict.kind === "invalid")
        bad.push({
          loc: ["body", "workflow_definition", "tools", i, "headers", name],
          msg: oldSealed
            ? "Looks like a masked value that does not match the stored one; send the value itself"
            : "Send the value itself (a masked value is kept only for the same tool, header and URL origin)",
          type: "value_error",
        });
      else headers[name] = { ...(await box().encrypt(verdict.value, aad(orgId, String(t.name), name))), mask: maskSecret(verdict.value) };
    }
    tools.push({ ...t, headers });
  }
  if (bad.length) throw new ApiError(422, bad);
  return { ...definition, tools };
}

/** The definition as shown: every sealed header value replaced by its mask. */
export function maskToolHeaders(definition: Obj): Obj {
  if (!Array.isArray(definition.tools)) return definition;
  const tools = definition.tools.map((t) => {
    if (!isObject(t) || !isObject(t.headers)) return t;
    const headers: Obj = {};
    for (const [k, v] of Object.entries(t.headers)) headers[k] = isEnvelope(v) ? String((v as { mask?: unknown }).mask ?? "") : v;
    return { ...t, headers };
  });
  return { ...definition, tools };
}

/** A tool's headers opened for a call (a value stored as plain text, from before sealing, is taken as it is). */
export async function openToolHeaders(
  box: SecretBox | null,
  orgId: number,
  tool: { name: string; headers: Record<string, unknown> },
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(tool.headers)) {
    if (typeof value === "string") out[name] = value;
    else if (isEnvelope(value)) {
      if (!box) throw new Error("A tool's header cannot be opened: ENCRYPTION_KEYS is not set");
      const { mask: _mask, ...envelope } = value as Sealed;
      out[name] = await box.decrypt(envelope, aad(orgId, tool.name, name));
    }
  }
  return out;
}

/**
 * HTTP tools are `workflow_definition.tools`. Sent under `workflow_configurations` they would be kept as plain
 * settings (never offered to the model, their header values stored and shown in clear), so that is a 422; the value is
 * not echoed, as it may hold a header's secret.
 */
export function refuseConfigurationTools(configurations: Obj | undefined): void {
  if (configurations && Object.hasOwn(configurations, "tools"))
    throw new ApiError(422, [
      {
        loc: ["body", "workflow_configurations", "tools"],
        msg: "HTTP tools belong in workflow_definition.tools (docs/agents.md), where they are offered to the model and their header values sealed",
        type: "value_error",
      },
    ]);
}
