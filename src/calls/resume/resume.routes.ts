// The resume URL a media document names (src/calls/resume/resume.ts): where a carrier asks what follows once the call's
// stream ended. Proven like the answer callback: the per-run token in the path, the carrier's signature where it
// signs (a once-only one spent), and an unsigned body must name the run's own call. It never changes the run's
// status: Vonage posts its websocket leg's own events here, whose `completed` is not the call's.
import { createRoute } from "@hono/zod-openapi";
import type { Context } from "hono";
import { z } from "@hono/zod-openapi";
import { createRouter } from "../../lib/app";
import { ApiError } from "../../lib/errors";
import { errors } from "../../lib/schemas";
import type { AppEnv } from "../../lib/types";
import { claimNonce, releaseNonce } from "../../telephony/nonces";
import { authenticate, callbackAuth, matchesRun, Params, publicUrl, refused } from "../callbacks/proof";
import { withCampaignCallIds } from "../runs/campaign-call-ids";
import { resumeDocument } from "./resume";

async function resume(c: Context<AppEnv>, params: z.infer<typeof Params>): Promise<Response> {
  const { run: initial, ctx, provider } = await authenticate(c, params.provider, params.run_id, params.token);
  const calls = provider.calls;
  if (!calls?.mediaDocument) throw new ApiError(404, `${provider.displayName} resumes no media stream through this URL`);
  const rawBody = new TextDecoder().decode(await c.req.arrayBuffer());
  const request = new Request(publicUrl(c.env, c.req.url), { method: c.req.method, headers: c.req.raw.headers, body: rawBody || undefined });
  if (!(await calls.verifyCallback(ctx, request, rawBody))) throw refused(403, "Invalid signature");
  const replay = calls.replayKey?.(ctx, request, rawBody) ?? null;
  if (replay && !(await claimNonce(c.env, ctx.id, replay))) throw refused(403, "Replayed signature: this callback was already received");
  try {
    if (!calls.signsCallbackBody) {
      const own = initial.providerCallId == null ? (await withCampaignCallIds(c.env, [initial]))[0] : initial;
      const updates = await calls.parseStatus(request, rawBody);
      if (updates.some((u) => !matchesRun(own, u, true))) throw refused(403, "Callback does not match this call");
    }
    const doc = await resumeDocument(c.env, c.req.url, calls, provider.name, initial, rawBody);
    if (!doc) return c.body(null, 204);
    return c.body(doc.body, 200, { "Content-Type": doc.contentType });
  } catch (err) {
    // Only an accepted request spends its nonce: the carrier's retry of a refused or failed one still lands.
    if (replay) await releaseNonce(c.env, ctx.id, replay);
    throw err;
  }
}

const resumePost = createRoute({
  method: "post",
  path: "/telephony/{provider}/resume/{run_id}/{token}",
  tags: ["telephony callbacks"],
  ...callbackAuth,
  summary: "Carrier request once a call's media stream ended: a new stream into the same call session, or a hang-up",
  request: { params: Params },
  responses: {
    200: {
      description:
        "The call's next document: its media document again with a fresh stream URL while its call session can take the call back " +
        "(the socket dropped when the Worker or the session restarted), else a document that hangs up",
      content: { "text/xml": { schema: z.string() }, "application/xml": { schema: z.string() }, "application/json": { schema: z.unknown() } },
    },
    204: { description: "Nothing to change: a Vonage websocket leg event other than a disconnection" },
    ...errors(401, 403, 404, 422),
  },
});

export const resumeRouter = createRouter().openapi(resumePost, (c) => resume(c, c.req.valid("param")) as never);
