// The inbound URL of a configuration, /api/v1/telephony/{provider}/inbound/{config_id}/{token}: where a carrier sends
// the calls dialed to the configuration's numbers (and, where it allows, their status). Proven like every callback:
// the configuration's token in the path, then the carrier's own signature where it signs (refused with 401/403
// before anything is created), and a signature's nonce or timestamp spent once (a replay is 403).
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createRouter } from "../../lib/app";
import { getDb } from "../../lib/db";
import { CALL_SETTINGS, requireSettings } from "../../lib/deployment";
import { ApiError } from "../../lib/errors";
import { errors, pathId } from "../../lib/schemas";
import type { AppEnv } from "../../lib/types";
import { verifyInboundToken } from "../../telephony/inbound-url";
import { claimNonce, releaseNonce } from "../../telephony/nonces";
import { getProvider } from "../../telephony/providers/registry";
import { PROVIDER_NAMES } from "../../telephony/providers/types";
import { loadConfigContext } from "../../telephony/resolve";
import { findConfigWithNumbersById } from "../../telephony/store";
import { publicUrl, refused } from "../callbacks/proof";
import { inboundRequest } from "./inbound";

const Params = z.object({
  provider: z.enum(PROVIDER_NAMES).openapi({ param: { name: "provider", in: "path" } }),
  config_id: pathId("config_id"),
  token: z.string().openapi({ param: { name: "token", in: "path" }, description: "The configuration's inbound token (shown in its numbers' inbound_url)" }),
});

async function handle(c: Context<AppEnv>, p: z.infer<typeof Params>): Promise<Response> {
  // A deployment missing a setting answers 503 (the carrier retries or fails over), not a refusal.
  requireSettings(c.env, CALL_SETTINGS);
  if (!(await verifyInboundToken(c.env.CALLBACK_SECRET, p.provider, p.config_id, p.token))) throw refused(401, "Invalid inbound token");
  // The configuration with its active numbers: one statement, and the carrier's context needs no second read.
  const found = await findConfigWithNumbersById(getDb(c.env), p.config_id);
  if (!found || found.row.provider !== p.provider) throw refused(401, "Invalid inbound token");
  const row = found.row;
  const provider = getProvider(row.provider);
  const calls = provider.calls;
  if (!calls?.inbound) throw new ApiError(404, `${provider.displayName} calls do not come in through this URL`);
  const ctx = await loadConfigContext(c.env, row, found.numbers);
  const rawBody = c.req.method === "GET" ? "" : new TextDecoder().decode(await c.req.arrayBuffer());
  const request = new Request(publicUrl(c.env, c.req.url), { method: c.req.method, headers: c.req.raw.headers, body: rawBody || undefined });
  const verified = calls.inbound.verify ? calls.inbound.verify(ctx, request, rawBody) : calls.verifyCallback(ctx, request, rawBody);
  if (!(await verified)) throw refused(403, "Invalid signature");
  const replay = calls.replayKey?.(ctx, request, rawBody) ?? null;
  if (replay && !(await claimNonce(c.env, ctx.id, replay))) throw refused(403, "Replayed signature: this request was already received");
  try {
    const reply = await inboundRequest({ env: c.env, requestUrl: c.req.url, row, ctx, provider, calls }, request, rawBody);
    if (!reply.doc) return c.body(null, 204);
    return c.body(reply.doc.body, 200, { "Content-Type": reply.doc.contentType });
  } catch (err) {
    if (replay) await releaseNonce(c.env, ctx.id, replay);
    throw err;
  }
}

const auth = {
  security: [],
  description:
    "No API key. Authorized by the configuration's inbound token in the path (an HMAC only this service can mint, like the per-run token " +
    "of the run callbacks; the numbers' `inbound_url` shows it) and, where the carrier signs, by its signature. A request failing either is 401/403 and " +
    "creates nothing. A new call to a number with an agent is answered with the carrier's media document (the call's audio to its call " +
    "session); a number without one, or with an archived or invalid agent, gets a spoken apology and a hang-up; over the organization's " +
    "concurrent-call cap, the carrier's busy refusal. A later request about the same call (its status) is applied to its run.",
};
const responses = {
  200: {
    description: "The carrier's document: the media stream, a message and hang-up, or a busy refusal",
    content: { "text/xml": { schema: z.string() }, "application/xml": { schema: z.string() }, "application/json": { schema: z.unknown() } },
  },
  204: { description: "A status about a known call, applied to its run (or about no call of ours, ignored)" },
  ...errors(401, 403, 404, 422),
};
const path = "/telephony/{provider}/inbound/{config_id}/{token}";
const inboundPost = createRoute({
  method: "post",
  path,
  tags: ["telephony callbacks"],
  ...auth,
  summary: "A call to one of the configuration's numbers",
  request: { params: Params },
  responses,
});
const inboundGet = createRoute({
  method: "get",
  path,
  tags: ["telephony callbacks"],
  ...auth,
  summary: "A call to one of the configuration's numbers (GET, e.g. Vonage's answer URL)",
  request: { params: Params },
  responses,
});

export const inboundRouter = createRouter()
  .openapi(inboundPost, (c) => handle(c, c.req.valid("param")) as never)
  .openapi(inboundGet, (c) => handle(c, c.req.valid("param")) as never);
