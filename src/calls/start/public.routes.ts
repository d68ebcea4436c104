// The public call endpoints: start one outbound call for an agent, by its Agent UUID or its API Trigger node's URL.
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createRouter } from "../../lib/app";
import { getDb } from "../../lib/db";
import { IDEMPOTENCY_HEADER, idempotencyKeyHeader, withIdempotency } from "../../lib/idempotency";
import { configurationChoice, errors, json } from "../../lib/schemas";
import type { AppEnv } from "../../lib/types";
import { AgentConflict, loadUsableWorkflowByTrigger, loadUsableWorkflowByUuid, type UsableWorkflow } from "../../workflows";
import { initialContext, MAX_CONTEXT_BYTES, MAX_CONTEXT_KEYS } from "../../lib/context-limits";
import { DefaultCountry } from "../../telephony/numbers";
import { startSingleCall } from "./start";

const tags = ["calls"];

// One shape, two closed objects: `extend` of a named schema becomes an allOf of two closed objects in the document,
// which no body can satisfy (each branch refuses the other's fields), so the workflow body is declared whole.
const callFields = {
  phone_number: z.string().min(1).max(255).openapi({
    example: "+14155550100",
    description:
      "E.164 for carriers; ari also takes extensions, SIP URIs and dial strings. An E.164 number the organization's calling policy refuses (GET /organizations/calling-policy) is a 422 `destination_not_allowed`",
  }),
  default_country: DefaultCountry.openapi({
    example: "US",
    description: "ISO 3166 alpha-2. A phone_number without + is read as a national number of this country and dialed in E.164",
  }),
  initial_context: initialContext(
    `Template variables for the agent's prompt and greeting (at most ${MAX_CONTEXT_KEYS} keys and ${MAX_CONTEXT_BYTES} bytes as JSON; stored on the run and shown in run lists)`,
  ),
};

const CallBody = z.strictObject(callFields).openapi("StartCall");

const WorkflowCallBody = z
  .strictObject({ ...callFields, telephony_configuration_id: configurationChoice("Route through this configuration instead of the default") })
  .openapi("StartWorkflowCall");

const CallStarted = z
  .object({
    status: z.string().openapi({ example: "initiated" }),
    workflow_run_id: z.number().int(),
    workflow_run_name: z.string().openapi({ example: "WR-1042" }),
  })
  .openapi("CallInitiationResponse");

const headers = z.object({
  [IDEMPOTENCY_HEADER]: idempotencyKeyHeader("Same key and body within 24 h returns the first response without a second call"),
});

const responses = {
  200: json(CallStarted, "The call was handed to the carrier"),
  ...errors(401, 404, 409, 422, 429),
  409: AgentConflict,
  502: {
    description: "The carrier refused or could not be reached; the run is kept as failed",
    content: { "application/json": { schema: z.object({ detail: z.string() }) } },
  },
};

const byAgent = createRoute({
  method: "post",
  path: "/public/agent/{uuid}",
  tags,
  summary: "Start a call for an agent (its Agent UUID or an API Trigger path)",
  request: {
    params: z.object({
      uuid: z
        .string()
        .min(1)
        .max(255)
        .openapi({ param: { name: "uuid", in: "path" } }),
    }),
    headers,
    body: { content: { "application/json": { schema: CallBody } }, required: true },
  },
  responses,
});

const byWorkflow = createRoute({
  method: "post",
  path: "/public/agent/workflow/{workflow_uuid}",
  tags,
  summary: "Start a call for an agent by its Agent UUID, optionally through a given telephony configuration",
  request: {
    params: z.object({
      workflow_uuid: z
        .string()
        .min(1)
        .max(255)
        .openapi({ param: { name: "workflow_uuid", in: "path" } }),
    }),
    headers,
    body: { content: { "application/json": { schema: WorkflowCallBody } }, required: true },
  },
  responses,
});

const byTrigger = createRoute({
  method: "post",
  path: "/public/trigger/{trigger_path}",
  tags,
  summary: "Start a call through an agent's API Trigger node (its trigger URL)",
  description:
    "The trigger URL of an `apiTrigger` node: `trigger_path` is the node's `data.trigger_path` (unique in the organization). " +
    "Same body, idempotency, rate limits, calling policy and rules as POST /public/agent/workflow/{workflow_uuid}; an Agent UUID is not a trigger path here (404).",
  request: {
    params: z.object({
      trigger_path: z
        .string()
        .min(1)
        .max(255)
        .openapi({ param: { name: "trigger_path", in: "path" }, example: "new-lead" }),
    }),
    headers,
    body: { content: { "application/json": { schema: WorkflowCallBody } }, required: true },
  },
  responses,
});

type Body = {
  phone_number: string;
  default_country?: string | null;
  initial_context?: Record<string, unknown> | null;
  telephony_configuration_id?: number | null;
};

/** How each public path finds its agent: an Agent UUID (and, on /public/agent/{uuid}, a trigger path), or a trigger path only. */
const byUuid = (allowTriggerPath: boolean) => (c: Context<AppEnv>, value: string) =>
  loadUsableWorkflowByUuid(getDb(c.env), c.get("orgId"), value, { allowTriggerPath });
const onlyTrigger = (c: Context<AppEnv>, value: string) => loadUsableWorkflowByTrigger(getDb(c.env), c.get("orgId"), value);

async function start(c: Context<AppEnv>, agent: string, body: Body, find: (c: Context<AppEnv>, value: string) => Promise<UsableWorkflow>) {
  const orgId = c.get("orgId");
  const result = await withIdempotency(
    c.env,
    { orgId, scope: "public_call", key: c.req.header(IDEMPOTENCY_HEADER), request: { path: c.req.path, body } },
    async () => {
      const workflow = await find(c, agent);
      return startSingleCall(c.env, {
        orgId,
        workflow,
        phoneNumber: body.phone_number,
        defaultCountry: body.default_country,
        initialContext: body.initial_context ?? {},
        telephonyConfigurationId: body.telephony_configuration_id,
        apiKeyId: c.get("apiKeyId"),
        origin: new URL(c.req.url).origin,
      });
    },
  );
  if (result.replayed) c.header("Idempotent-Replayed", "true");
  return c.json(result.body as never, result.status as 200);
}

export const publicCallsRouter = createRouter()
  .openapi(byAgent, async (c) => {
    // Only the workflow endpoint routes by configuration: `telephony_configuration_id` is an unknown field here (422).
    return start(c, c.req.valid("param").uuid, c.req.valid("json"), byUuid(true));
  })
  .openapi(byWorkflow, async (c) => start(c, c.req.valid("param").workflow_uuid, c.req.valid("json"), byUuid(false)))
  .openapi(byTrigger, async (c) => start(c, c.req.valid("param").trigger_path, c.req.valid("json"), onlyTrigger));
