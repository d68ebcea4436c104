// Web calls over HTTP: making one (API key) and its WebSocket (the single-use token in the URL; docs/web-calls.md).
import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../../lib/app";
import { initialContext } from "../../lib/context-limits";
import { errors, idParam, json, pathId } from "../../lib/schemas";
import { AgentConflict } from "../../workflows";
import { createWebCall, openWebCall, WEB_TOKEN_TTL_SECONDS, WebCallCreated, WebCallSetup, webCallSetup } from "./web-call";

const tags = ["calls"];

const WebCallBody = z
  .strictObject({
    initial_context: initialContext("Template variables for the agent's prompt and greeting, as for a phone call"),
  })
  .openapi("StartWebCall");

const create = createRoute({
  method: "post",
  path: "/workflow/{workflow_id}/web-call",
  tags,
  summary: "Talk to an agent from a browser: a single-use token and the WebSocket URL it opens",
  description:
    `The call counts against the organization's concurrent-call cap and call-start rate limits from now on. The token opens one socket, ` +
    `within ${WEB_TOKEN_TTL_SECONDS / 60} minutes; the run records the call (\`direction: "web"\`). The socket's protocol is in docs/web-calls.md.`,
  request: {
    params: idParam("workflow_id"),
    body: { content: { "application/json": { schema: WebCallBody } }, required: false },
  },
  responses: { 200: json(WebCallCreated, "The call is ready for its socket"), ...errors(401, 404, 422, 429, 503), 409: AgentConflict },
});

const setup = createRoute({
  method: "get",
  path: "/workflow/{workflow_id}/web-call",
  tags,
  summary: "Before talking to an agent from a browser: the template variables to fill and whether the caller speaks or types",
  description:
    "Places no call. The variables are those a call must give (POST's initial_context) unless the agent gives a default; " +
    "input_mode says whether the agent's engines understand speech (else the caller types turns: docs/web-calls.md).",
  request: { params: idParam("workflow_id") },
  responses: { 200: json(WebCallSetup, "What the call needs"), ...errors(401, 404, 422) },
});

const open = createRoute({
  method: "get",
  path: "/web-call/{run_id}/{token}",
  tags,
  security: [],
  summary: "A web call's WebSocket: the browser's audio and the agent's, as 16 kHz 16-bit PCM frames and JSON control messages",
  description:
    "No API key (a browser's WebSocket cannot send one): authorized by the single-use per-run token POST /workflow/{workflow_id}/web-call made. " +
    "A forged or expired token is 401, a spent one 403, a run that is not a web call 404, an ended call 409; all before any audio.",
  request: {
    params: z.object({
      run_id: pathId("run_id"),
      token: z
        .string()
        .max(200)
        .openapi({ param: { name: "token", in: "path" } }),
    }),
  },
  responses: { 101: { description: "WebSocket upgrade" }, ...errors(401, 403, 404, 409, 429), 426: { description: "Not a WebSocket upgrade" } },
});

export const webCallRouter = createRouter()
  .openapi(setup, async (c) => c.json(await webCallSetup(c.env, c.get("orgId"), c.req.valid("param").workflow_id), 200))
  .openapi(create, async (c) => {
    const body = (c.req.valid("json") as z.infer<typeof WebCallBody> | undefined) ?? {};
    const created = await createWebCall(c.env, {
      orgId: c.get("orgId"),
      workflowId: c.req.valid("param").workflow_id,
      initialContext: body.initial_context ?? {},
      apiKeyId: c.get("apiKeyId") ?? null,
      origin: new URL(c.req.url).origin,
    });
    return c.json(created, 200);
  })
  .openapi(open, (c) => openWebCall(c.env, c.req.raw, c.req.valid("param").run_id, c.req.valid("param").token) as never);
