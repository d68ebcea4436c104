// Exotel's inbound stream URL (the Voicebot applet's wss:// URL): see src/calls/inbound/exotel-inbound.ts.
import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../../lib/app";
import { errors, pathId } from "../../lib/schemas";
import { exotelInboundStream } from "./exotel-inbound";

const stream = createRoute({
  method: "get",
  path: "/telephony/exotel/inbound-stream/{config_id}/{token}",
  tags: ["telephony callbacks"],
  security: [],
  summary: "A call to one of an Exotel configuration's numbers: the Voicebot applet's WebSocket",
  description:
    "No API key. Authorized by the configuration's inbound token in the path (an HMAC only this service can mint, like the per-run token " +
    "of the run callbacks; its numbers' `inbound_url` shows it); a wrong token is 401 before " +
    "the socket is accepted, and creates nothing. Exotel's `connected` and `start` (its `to` the dialed Exophone, `from` the caller) must " +
    "arrive within 5 seconds and 4 messages. A number with an agent is put through to it (the run is `inbound`, the call's audio and " +
    "`stop` go to its call session); a number without one, an unusable agent or a caller over the concurrent-call cap gets the socket " +
    "closed (code 1000, reason `refused: …` or `busy`), so the flow goes on to its next applet.",
  request: {
    params: z.object({
      config_id: pathId("config_id"),
      token: z
        .string()
        .max(200)
        .openapi({ param: { name: "token", in: "path" }, description: "The configuration's inbound token" }),
    }),
  },
  responses: { 101: { description: "WebSocket upgrade" }, ...errors(401, 404, 422), 426: { description: "Not a WebSocket upgrade" } },
});

export const exotelInboundRouter = createRouter().openapi(
  stream,
  (c) => exotelInboundStream(c.env, c.executionCtx, c.req.raw, c.req.valid("param").config_id, c.req.valid("param").token) as never,
);
