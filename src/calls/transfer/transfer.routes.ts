// The carrier's side of a hand-over to a person, under /api/v1/telephony/{provider}/: the document a transfer fetches
// (Plivo's and Vobiz's `aleg_url`: dial the person), the reports on a warm transfer's person's leg (answered: the
// caller joins them; no answer: the agent takes the caller back), and the whisper the person hears first. Proven like
// every callback: the run's token in the path, the carrier's signature where it signs (a once-only one spent).
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createRouter } from "../../lib/app";
import { ApiError } from "../../lib/errors";
import { log } from "../../lib/log";
import { errors } from "../../lib/schemas";
import type { AppEnv } from "../../lib/types";
import { claimNonce, releaseNonce } from "../../telephony/nonces";
import { providerEnvOf } from "../../telephony/provisioning";
import { authenticate, callbackAuth, Params, publicUrl, refused } from "../callbacks/proof";
import { callSessionStub } from "../session/stub";
import { legOf, saveTransfer, settleTransfer, TRANSFER_PATHS } from "./transfer";
import { whisperExpiresAt, WHISPER_GRACE_SECONDS, type StoredTransfer, type TransferSettled } from "../runs/transfer-record";

type Checked = Awaited<ReturnType<typeof authenticate>> & { rawBody: string };

/** The token and the carrier's signature checked; the body as sent (signatures cover its bytes). */
async function verified(c: Context<AppEnv>, params: z.infer<typeof Params>, fn: (checked: Checked) => Promise<Response>): Promise<Response> {
  const checked = await authenticate(c, params.provider, params.run_id, params.token);
  const calls = checked.provider.calls;
  if (!calls) throw refused(401, "Invalid callback token");
  const rawBody = c.req.method === "GET" ? "" : new TextDecoder().decode(await c.req.arrayBuffer());
  const request = new Request(publicUrl(c.env, c.req.url), { method: c.req.method, headers: c.req.raw.headers, body: rawBody || undefined });
  if (!(await calls.verifyCallback(checked.ctx, request, rawBody))) throw refused(403, "Invalid signature");
  const replay = calls.replayKey?.(checked.ctx, request, rawBody) ?? null;
  if (replay && !(await claimNonce(c.env, checked.ctx.id, replay))) throw refused(403, "Replayed signature: this callback was already received");
  try {
    return await fn({ ...checked, rawBody });
  } catch (err) {
    if (replay) await releaseNonce(c.env, checked.ctx.id, replay);
    throw err;
  }
}

const transferOf = (run: { transfer: unknown }) => run.transfer as StoredTransfer | null;

function document(c: Context<AppEnv>, params: z.infer<typeof Params>) {
  return verified(c, params, async ({ run, provider }) => {
    const t = transferOf(run);
    const render = provider.calls?.transfer?.document;
    if (!t || !render || !run.providerCallId) throw new ApiError(404, "This call has no transfer to a person");
    const doc = render(await legOf(c.env, run, t, run.providerCallId));
    return c.body(doc.body, 200, { "Content-Type": doc.contentType });
  });
}

/** The person's leg's reports: once one settles the transfer, the run records it and the call's session hears it. */
function status(c: Context<AppEnv>, params: z.infer<typeof Params>) {
  return verified(c, params, async ({ run, ctx, provider, rawBody }) => {
    const t = transferOf(run);
    const progress = provider.calls?.transfer?.progress;
    if (!t || !progress || !run.providerCallId) return c.body(null, 204);
    if (t.outcome) {
      // A cold transfer settles once the carrier took the caller, but the carrier may still need us for what follows
      // (Telnyx: the person's leg reached nobody, and the caller must not stay on a silent line): the carrier's handler
      // runs, the outcome stands, the session (gone) is not told. Any other report after the settlement changes nothing.
      if (t.mode === "cold" && t.outcome === "connected") await afterCold(c, run, t, progress, ctx, rawBody);
      return c.body(null, 204);
    }
    const session = callSessionStub(c.env, run.id);
    // The carrier may move the caller now (on answer): the session reads its stream's end as the hand-over meanwhile.
    await session.transferSettled("hold").catch(() => false);
    let outcome: TransferSettled | null = null;
    try {
      const p = await progress(ctx, providerEnvOf(c.env, c.req.url), await legOf(c.env, run, t, run.providerCallId), rawBody);
      if (p.outcome !== "pending") {
        outcome = p.outcome;
        await settleTransfer(c.env, run, t, p.outcome, p.message ?? null);
      }
    } finally {
      // The run has the outcome; were the session unreachable, its own deadline gives the agent the caller back.
      await session.transferSettled(outcome).catch((err) => log("error", "transfer_not_handed_over", { run_id: run.id, error: String(err) }));
    }
    return c.body(null, 204);
  });
}

type Progress = NonNullable<NonNullable<NonNullable<Checked["provider"]["calls"]>["transfer"]>["progress"]>;

/** A settled cold transfer's later report: the carrier's handler acts on it; what it says only adds to the message. */
async function afterCold(c: Context<AppEnv>, run: Checked["run"], t: StoredTransfer, progress: Progress, ctx: Checked["ctx"], rawBody: string) {
  const p = await progress(ctx, providerEnvOf(c.env, c.req.url), await legOf(c.env, run, t, run.providerCallId!), rawBody);
  if (p.outcome === "pending" || p.outcome === "connected") return;
  const message = `After the hand-over: ${p.message ?? p.outcome}`;
  log("warning", "call_transfer_after_cold", { run_id: run.id, outcome: p.outcome, message });
  await saveTransfer(c.env, run.id, { ...t, message });
}

/**
 * The whisper in the agent's voice, for the carrier to play to the person (the token in the path proves the fetch).
 * The run's token lives as long as the run, so the link's life is the transfer's own: its ring time and a margin
 * from when it was asked (stored on the run, not in the URL, so it cannot be stretched), then a 404.
 */
async function whisper(c: Context<AppEnv>, params: z.infer<typeof Params>) {
  const { run } = await authenticate(c, params.provider, params.run_id, params.token);
  const t = transferOf(run);
  const key = t?.whisper_key;
  if (t && key && Date.now() > whisperExpiresAt(t)) throw new ApiError(404, "The whisper has expired: it is served only while the transfer rings");
  const obj = key ? await c.env.UPLOADS.get(key) : null;
  if (!obj) throw new ApiError(404, "No whisper for this call");
  return new Response(obj.body, { status: 200, headers: { "Content-Type": "audio/wav", "Content-Length": String(obj.size) } });
}

const tags = ["telephony callbacks"];
const path = (kind: keyof typeof TRANSFER_PATHS) => `/telephony/{provider}/${TRANSFER_PATHS[kind]}/{run_id}/{token}`;
const doc = {
  description: "The carrier's document for the hand-over (Plivo XML, for Plivo's and Vobiz's Transfer API): dial the person",
  content: { "application/xml": { schema: z.string() }, "text/xml": { schema: z.string() } },
};
const documentRoute = (method: "get" | "post") =>
  createRoute({
    method,
    path: path("document"),
    tags,
    ...callbackAuth,
    summary: "The transfer's document the carrier fetches (dial the person the agent hands the call to)",
    request: { params: Params },
    responses: { 200: doc, ...errors(401, 403, 404, 422) },
  });
const statusRoute = createRoute({
  method: "post",
  path: path("status"),
  tags,
  ...callbackAuth,
  summary: "Carrier reports on a warm transfer's person's leg (answered: the caller joins them)",
  request: { params: Params },
  responses: { 204: { description: "Recorded (or nothing to change)" }, ...errors(401, 403, 404, 422) },
});
const whisperRoute = createRoute({
  method: "get",
  path: path("whisper"),
  tags,
  security: [],
  description: `No API key: authorized by the per-run token in the path (in the URL edgedial handed the carrier). Served only while the transfer can use it: its ring time (timeout_seconds) and ${WHISPER_GRACE_SECONDS} s from when it was asked; after that a 404.`,
  summary: "The whisper a warm transfer's person hears before the caller joins (WAV, in the agent's voice)",
  request: { params: Params },
  responses: {
    200: { description: "16-bit PCM WAV", content: { "audio/wav": { schema: z.string().openapi({ format: "binary" }) } } },
    ...errors(401, 404, 422),
  },
});

export const transferRouter = createRouter()
  .openapi(documentRoute("get"), (c) => document(c, c.req.valid("param")) as never)
  .openapi(documentRoute("post"), (c) => document(c, c.req.valid("param")) as never)
  .openapi(statusRoute, (c) => status(c, c.req.valid("param")) as never)
  .openapi(whisperRoute, (c) => whisper(c, c.req.valid("param")) as never);
