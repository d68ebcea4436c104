// Carrier callbacks under /api/v1/telephony/{provider}/...: the answer document, status
// callbacks and the media socket. Each proves itself twice: our token in the path (the run's for callbacks; for the
// media socket, a short-lived one spent by its first upgrade), and the carrier's signature where it signs. A callback
// failing either is refused (401/403) and changes nothing.
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { createRouter } from "../lib/app";
import { getDb } from "../lib/db";
import { ApiError } from "../lib/errors";
import { CALL_SETTINGS, requireSettings } from "../lib/deployment";
import { errors, MAX_ID } from "../lib/schemas";
import type { AppEnv } from "../lib/types";
import type { CallbackKind } from "./callbacks/callback-urls";
import { authenticate, type Checked, callbackAuth, loadRun, matchesRun, Params, publicUrl, refused } from "./callbacks/proof";
import { withCampaignCallIds } from "./runs/campaign-call-ids";
import { greetingFor } from "./start/greeting";
import { liveAgent } from "./session/agents";
import { SESSION_HEADER } from "./session/call-session";
import { sessionStart } from "./start/session-start";
import { callSessionStub } from "./session/stub";
import { isFinal, type RunRow } from "./runs/runs";
import { workflowRuns } from "../db/schema";
import { and, eq, isNull } from "drizzle-orm";
import { applyStatus } from "./runs/status";
import { keyToSession } from "./callbacks/keypad";
import { getProvider } from "../telephony/providers/registry";
import { PROVIDER_NAMES, type StatusUpdate } from "../telephony/providers/types";
import { providerEnvOf } from "../telephony/provisioning";
import { claimNonce, releaseNonce } from "../telephony/nonces";
import { isMachine } from "../telephony/providers/kit";
import { log } from "../lib/log";
import { checkStreamToken, requireSignedUpgrade, spendStreamToken } from "./callbacks/stream-auth";
import { mediaDocumentFor, restartStoppedStream } from "./resume/resume";

const tags = ["telephony callbacks"];

async function handle(c: Context<AppEnv>, kind: CallbackKind, params: z.infer<typeof Params>): Promise<Response> {
  const { run: initial, ctx, provider } = await authenticate(c, params.provider, params.run_id, params.token);
  const calls = provider.calls;
  if (!calls) throw refused(401, "Invalid callback token");
  // Bytes as sent: signatures cover the raw body (decoding a form as text would not change them, but workerd warns).
  const rawBody = c.req.method === "GET" || c.req.method === "HEAD" ? "" : new TextDecoder().decode(await c.req.arrayBuffer());
  const request = new Request(publicUrl(c.env, c.req.url), { method: c.req.method, headers: c.req.raw.headers, body: rawBody || undefined });
  if (!(await calls.verifyCallback(ctx, request, rawBody))) throw refused(403, "Invalid signature");

  // A signature whose nonce (or JWT id) was already accepted is a replay, even with another body: 403. Only an
  // accepted callback spends it: when this delivery is refused (a body naming another call) or fails on our
  // side, the nonce is given back, so the carrier's genuine delivery or retry of it still lands.
  const replay = calls.replayKey?.(ctx, request, rawBody) ?? null;
  if (replay && !(await claimNonce(c.env, ctx.id, replay))) throw refused(403, "Replayed signature: this callback was already received");
  try {
    return await process(c, kind, { run: initial, ctx, provider }, request, rawBody);
  } catch (err) {
    if (replay) await releaseNonce(c.env, ctx.id, replay);
    throw err;
  }
}

/** A machine verdict the run did not have yet, while its call runs on the media path: its session's agent hears it. */
async function machineToSession(env: Env, before: RunRow, run: RunRow, updates: StatusUpdate[]): Promise<void> {
  const verdict = updates.find((u) => isMachine(u.answeredBy))?.answeredBy;
  if (!verdict || isMachine(before.answeredBy) || isFinal(run.status) || !liveAgent(env)) return;
  try {
    await callSessionStub(env, run.id).machineDetected(verdict);
  } catch (err) {
    // The verdict is on the run; the agent still judges the callee's first words itself.
    log("error", "machine_verdict_not_handed_over", { run_id: run.id, error: String(err) });
  }
}

/**
 * The carrier reports an answered call over: its session ends now (the callee hung up), rather than wait out a
 * socket that may already be gone (a restart) and then hang up a call that is over.
 */
async function endToSession(env: Env, before: RunRow, run: RunRow): Promise<void> {
  if (!isFinal(run.status) || isFinal(before.status) || run.answeredAt == null || !liveAgent(env)) return;
  try {
    await callSessionStub(env, run.id).carrierEnded();
  } catch (err) {
    // The run is final; the session still ends by its socket's close or its heartbeat.
    log("error", "call_end_not_handed_over", { run_id: run.id, error: String(err) });
  }
}

/** A verified callback: status updates checked against the run, applied, then the carrier's commands or answer document. */
async function process(c: Context<AppEnv>, kind: CallbackKind, { run: initial, ctx, provider }: Checked, request: Request, rawBody: string): Promise<Response> {
  const calls = provider.calls!;
  const updates = await calls.parseStatus(request, rawBody);
  // A body no signature covers must name the run's own call (a campaign call not yet answered: the call id its
  // campaign's object holds; the record learns it from the answer).
  const requireId = !calls.signsCallbackBody;
  const own = requireId && initial.providerCallId == null ? (await withCampaignCallIds(c.env, [initial]))[0] : initial;
  if (updates.some((u) => !matchesRun(own, u, requireId))) throw refused(403, "Callback does not match this call");

  let run = initial;
  let changed = false;
  for (const u of updates) {
    const r = await applyStatus(c.env, run, u);
    run = r.run;
    changed ||= r.applied;
  }
  await machineToSession(c.env, initial, run, updates);
  await keyToSession(c.env, run, calls.keyPressed?.(rawBody) ?? null);
  if (changed) await endToSession(c.env, initial, run);

  const db = getDb(c.env);
  // Commands react to news only: a redelivered call.answered must not speak the greeting twice. With a voice agent
  // on the media path there is nothing to command: the call's session speaks and ends the call.
  if (calls.afterStatus && !liveAgent(c.env) && (changed || updates.length === 0)) {
    try {
      await calls.afterStatus(ctx, providerEnvOf(c.env, c.req.url), rawBody, () => greetingFor(db, run));
    } catch (err) {
      // The status is recorded; a failed command (speak, hang up) must not make the carrier redeliver it.
      log("error", "carrier_command_after_callback_failed", { provider: provider.name, run_id: run.id, error: String(err) });
      // A call left open would run to the carrier's own limit (Telnyx: 4 hours): end it, and say why on the run.
      if (run.providerCallId && !isFinal(run.status)) {
        let reason = `${(err as Error)?.message ?? String(err)}; the call was hung up`;
        try {
          await calls.hangup(ctx, providerEnvOf(c.env, c.req.url), run.providerCallId);
          run = (await applyStatus(c.env, run, { status: "failed", error: reason })).run;
        } catch (hangupErr) {
          reason = `${(err as Error)?.message ?? String(err)}; hanging up failed too: ${String(hangupErr)}`;
        }
        await db
          .update(workflowRuns)
          .set({ error: reason })
          .where(and(eq(workflowRuns.id, run.id), isNull(workflowRuns.error)))
          .run();
      }
    }
  }
  // On the media path, a carrier that reports its stream stopped (Telnyx) gets a new one while the call goes on.
  if (liveAgent(c.env)) await restartStoppedStream(c.env, c.req.url, ctx, calls, provider.name, run, rawBody);
  if (kind === "status") return c.body(null, 204);
  // With a voice agent on the media path, the answer connects the call's audio to its session; otherwise the
  // carrier speaks the greeting.
  if (liveAgent(c.env) && calls.mediaDocument) {
    const media = await mediaDocumentFor(c.env, c.req.url, calls, provider.name, run.id);
    return c.body(media.body, 200, { "Content-Type": media.contentType });
  }
  const doc = calls.answerDocument(await greetingFor(db, run));
  return c.body(doc.body, 200, { "Content-Type": doc.contentType });
}

/**
 * A carrier's media socket (Exotel's `streamurl`, Telnyx's `stream_url`, the stream of an answer document, Asterisk's
 * connection): its stream token checked (and the carrier's signature where it signs the upgrade) and spent (stream-auth),
 * then handed to the run's call session, which accepts it and carries the call's audio. Another fresh token for the
 * same run (a call reconnecting) is the session's to accept or refuse.
 */
async function stream(c: Context<AppEnv>, params: z.infer<typeof Params>): Promise<Response> {
  requireSettings(c.env, CALL_SETTINGS);
  const once = await checkStreamToken(c.env.CALLBACK_SECRET, params.provider, params.run_id, params.token);
  const { run, ctx, provider } = await loadRun(c, params.provider, params.run_id);
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") throw new ApiError(426, "Expected a WebSocket upgrade");
  if (!provider.calls?.media) throw new ApiError(404, `${provider.displayName} has no media stream`);
  if (isFinal(run.status)) throw new ApiError(409, "This call has ended");
  await requireSignedUpgrade(provider.name, provider.calls, ctx, publicUrl(c.env, c.req.url), c.req.raw.headers);
  const giveBack = await spendStreamToken(c.env, ctx.id, once);
  let res: Response;
  try {
    const headers = new Headers(c.req.raw.headers);
    headers.set(SESSION_HEADER, JSON.stringify(await sessionStart(c.env, run, provider.name)));
    res = await callSessionStub(c.env, run.id).fetch(new Request(c.req.raw.url, { headers }));
  } catch (err) {
    await giveBack();
    throw err;
  }
  if (res.status === 101) return res;
  await giveBack();
  const { detail } = await res.json<{ detail: string }>();
  throw new ApiError(res.status as ContentfulStatusCode, detail);
}

const responses = { ...errors(401, 403, 404, 422) };
const answerDoc = {
  description: "The answer document (TwiML, Plivo XML, NCCO or CXML) speaking the greeting, then hanging up",
  content: { "text/xml": { schema: z.string() }, "application/xml": { schema: z.string() }, "application/json": { schema: z.unknown() } },
};

const answerPost = createRoute({
  method: "post",
  path: "/telephony/{provider}/answer/{run_id}/{token}",
  tags,
  ...callbackAuth,
  summary: "Carrier answer request",
  request: { params: Params },
  responses: { 200: answerDoc, ...responses },
});
const answerGet = createRoute({
  method: "get",
  path: "/telephony/{provider}/answer/{run_id}/{token}",
  tags,
  ...callbackAuth,
  summary: "Carrier answer request (GET, e.g. Vonage)",
  request: { params: Params },
  responses: { 200: answerDoc, ...responses },
});
const statusPost = createRoute({
  method: "post",
  path: "/telephony/{provider}/status/{run_id}/{token}",
  tags,
  ...callbackAuth,
  summary: "Carrier status callback",
  request: { params: Params },
  responses: { 204: { description: "Recorded (or ignored as a duplicate)" }, ...responses },
});
/** The media socket's token is its own: minted with each stream URL, short-lived and spent by its first upgrade. */
const streamTokenDoc = "The stream token of the stream URL edgedial handed the carrier: valid 15 minutes, spent by its first upgrade";
const StreamParams = Params.extend({ token: z.string().openapi({ param: { name: "token", in: "path" }, description: streamTokenDoc }) });
const streamAuth = {
  security: [],
  description:
    "No API key. Authorized by the per-run token in the URL, for the media socket a stream token of its own (a new one in every " +
    "stream URL edgedial hands a carrier: an HMAC with an expiry 15 minutes on and a nonce, refused once an upgrade used it; the " +
    "run's answer/status token opens no stream) and, for Twilio, by `X-Twilio-Signature` over the stream URL. A forged or expired " +
    "token is 401; a used token or a bad signature 403.",
};
const streamGet = createRoute({
  method: "get",
  path: "/telephony/{provider}/stream/{run_id}/{token}",
  tags,
  ...streamAuth,
  summary: "Carrier media WebSocket: the call's audio, carried by its call session",
  request: { params: StreamParams },
  responses: {
    101: { description: "WebSocket upgrade" },
    ...errors(401, 403, 404, 409, 422),
    426: { description: "Not a WebSocket upgrade" },
  },
});

/**
 * The same socket with the run and its token as query parameters: Asterisk connecting out (ARI external media with
 * `ws_client_name`) dials a fixed websocket_client.conf URI and can only append parameters to it.
 */
const streamQuery = z.object({
  run_id: z.coerce
    .number()
    .int()
    .positive()
    .max(MAX_ID)
    .openapi({ param: { name: "run_id", in: "query" }, description: "The run" }),
  token: z.string().openapi({ param: { name: "token", in: "query" }, description: streamTokenDoc }),
});
const streamByQuery = createRoute({
  method: "get",
  path: "/telephony/{provider}/stream",
  tags,
  ...streamAuth,
  summary: "Carrier media WebSocket, the run named in the query (for a PBX that connects to one fixed URI)",
  request: { params: Params.pick({ provider: true }), query: streamQuery },
  responses: streamGet.responses,
});

const inboundParams = z.object({ provider: z.enum(PROVIDER_NAMES).openapi({ param: { name: "provider", in: "path" } }) });
const inboundPost = createRoute({
  method: "post",
  path: "/telephony/{provider}/inbound",
  tags,
  security: [],
  description:
    "No API key. The answer URL a carrier application is created with when a configuration is saved (Plivo, Vobiz, Cloudonix), before any of its numbers has an inbound agent. A call here names no configuration and carries no token, so no agent can be trusted to take it: it is declined with the carrier's hang-up document and no run is made. Attaching an agent to a number (`inbound_workflow_id`, docs/inbound.md) points the carrier at `/telephony/{provider}/inbound/{config_id}/{token}`, where calls are answered by the agent.",
  summary: "Calls to a carrier application no agent answers yet: declined with a hang-up",
  request: { params: inboundParams },
  // A provider that is not one of ours names no such URL: the 404 every path parameter that names nothing gets.
  responses: { 200: answerDoc, ...errors(404, 422) },
});

/** The URL provisioned applications answer on until a number gets an agent: unverifiable (no token), so hung up. */
function inbound(c: Context<AppEnv>, providerName: string): Response {
  const doc = getProvider(providerName).calls?.answerDocument("") ?? { body: "", contentType: "text/plain" };
  return c.body(doc.body, 200, { "Content-Type": doc.contentType });
}

export const callbacksRouter = createRouter()
  .openapi(answerPost, (c) => handle(c, "answer", c.req.valid("param")) as never)
  .openapi(answerGet, (c) => handle(c, "answer", c.req.valid("param")) as never)
  .openapi(statusPost, (c) => handle(c, "status", c.req.valid("param")) as never)
  .openapi(streamGet, (c) => stream(c, c.req.valid("param")) as never)
  .openapi(streamByQuery, (c) => stream(c, { ...c.req.valid("param"), ...c.req.valid("query") }) as never)
  .openapi(inboundPost, (c) => inbound(c, c.req.valid("param").provider) as never);
