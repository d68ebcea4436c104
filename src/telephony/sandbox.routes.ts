// The sandbox carrier's own controls (local development only: elsewhere these paths are 404s, as the sandbox does not
// exist there). Each asks the carrier simulator to act as the carrier would, through its control API: a caller dials
// a sandbox number (Twilio's signed voice request to the number's VoiceUrl, then the callee talks on the stream), or
// the callee of a live sandbox call presses keys (Twilio's `dtmf` messages on the call's media stream). Nothing here
// reaches the run directly: it hears of both as it would from a carrier.
import { createRoute, z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { phoneNumbers, workflowRuns } from "../db/schema";
import { createRouter } from "../lib/app";
import { localDev } from "../lib/deployment";
import { getDb } from "../lib/db";
import { ApiError, conflict, notFound } from "../lib/errors";
import { errors, idParam, json } from "../lib/schemas";
import { routeNumberToEdgedial } from "./inbound-attach";
import { providerEnvOf } from "./provisioning";
import { sandboxSimulatorUrl } from "./providers/sandbox/calls";
import { getConfig } from "./store";

const tags = ["sandbox"];
const LOCAL_ONLY = "Local development only (LOCAL_DEV): elsewhere 404, as the sandbox does not exist there.";

const DEFAULT_CALLER = "+14155550100";
const SandboxCallBody = z
  .object({
    from: z
      .string()
      .regex(/^\+[1-9]\d{6,14}$/, "an E.164 number, e.g. +14155550123")
      .optional()
      .openapi({ description: "The simulated caller's number (E.164; default +14155550100)", example: "+14155550100" }),
  })
  .strict();

const SandboxCall = z
  .object({
    call_id: z.string().openapi({ description: "The simulator's CallSid of the call" }),
    to: z.string(),
    from: z.string(),
    answered: z.boolean().openapi({ description: "Whether edgedial answered the simulator's voice request (2xx)" }),
    run_id: z.number().int().nullable().openapi({ description: "The run the call became (null: the number has no agent, or edgedial was not reached)" }),
    workflow_id: z.number().int().nullable(),
  })
  .openapi("SandboxCall");

const SandboxKeysBody = z
  .object({
    digits: z
      .string()
      .regex(/^[0-9*#A-Da-d]{1,32}$/, "1 to 32 keys: 0-9, *, #, A-D")
      .openapi({ example: "1#" }),
  })
  .strict();
const SandboxKeys = z.object({ run_id: z.number().int(), call_id: z.string(), digits: z.string() }).openapi("SandboxKeys");

const placeCall = createRoute({
  method: "post",
  path: "/organizations/telephony-configs/{config_id}/phone-numbers/{number_id}/sandbox-call",
  tags,
  summary: "Call a sandbox number from the simulator (an inbound call to its agent)",
  description: `${LOCAL_ONLY} The number is pointed at edgedial (its VoiceUrl on the simulator's sandbox account, as attaching an agent does), then the simulator dials it: Twilio's signed voice request to the configuration's inbound URL, and the sandbox callee talks on the media stream the answer opens. 409: the configuration is not a sandbox one. 502: the simulator could not be reached.`,
  request: {
    params: z.object({ ...idParam("config_id").shape, ...idParam("number_id").shape }),
    body: { content: { "application/json": { schema: SandboxCallBody } }, required: false },
  },
  responses: { 200: json(SandboxCall), ...errors(401, 404, 409, 422, 502, 503) },
});

const pressKeys = createRoute({
  method: "post",
  path: "/workflow/{workflow_id}/runs/{run_id}/sandbox-keys",
  tags,
  summary: "Press keys as the callee of a live sandbox call",
  description: `${LOCAL_ONLY} The simulator's callee presses the keys on the call's media stream (Twilio's \`dtmf\` message per key), which the agent hears as from any carrier. 409: the run is not a sandbox call, or its call has no live audio in the simulator (not answered yet, or over). 502: the simulator could not be reached.`,
  request: {
    params: z.object({ ...idParam("workflow_id").shape, ...idParam("run_id").shape }),
    body: { content: { "application/json": { schema: SandboxKeysBody } }, required: true },
  },
  responses: { 200: json(SandboxKeys), ...errors(401, 404, 409, 422, 502) },
});

/** A request to the simulator's control API (beside the sandbox's Twilio, at the same origin). */
async function simulator(env: Env, requestUrl: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const origin = new URL(sandboxSimulatorUrl(providerEnvOf(env, requestUrl))).origin;
  try {
    const res = await fetch(`${origin}/_sim${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    return { status: res.status, json: await res.json().catch(() => ({})) };
  } catch (err) {
    throw new ApiError(
      502,
      `The carrier simulator could not be reached at ${origin} (is npm run dev running?): ${String((err as Error)?.message ?? err).slice(0, 200)}`,
    );
  }
}

function requireLocal(env: Env) {
  if (!localDev(env)) throw new ApiError(404, "Not found");
}

/** Calling a sandbox number (the `organizations` segment). */
export const sandboxNumbersRouter = createRouter().openapi(placeCall, async (c) => {
  requireLocal(c.env);
  const orgId = c.get("orgId");
  const { config_id, number_id } = c.req.valid("param");
  const from = (c.req.valid("json") as z.infer<typeof SandboxCallBody> | undefined)?.from ?? DEFAULT_CALLER;
  const db = getDb(c.env);
  const config = await getConfig(db, orgId, config_id);
  const number = await db
    .select()
    .from(phoneNumbers)
    .where(and(eq(phoneNumbers.id, number_id), eq(phoneNumbers.configId, config_id), eq(phoneNumbers.orgId, orgId)))
    .get();
  if (!number) throw notFound("Phone number");
  if (config.provider !== "sandbox") throw conflict("Only a sandbox configuration's numbers can be called from the simulator");
  // Point the number at edgedial first (idempotent): a number added before it had an agent, or a simulator restarted.
  await routeNumberToEdgedial(c.env, c.req.url, config, number.address);
  const placed = await simulator(c.env, c.req.url, "/accounts/sandbox/inbound", { to: number.address, from, deliver: true });
  if (placed.status !== 200) throw new ApiError(502, `The carrier simulator refused the call: ${placed.json?.message ?? placed.status}`);
  const answer = (placed.json.callbacks ?? []).find((cb: { kind: string }) => cb.kind === "answer");
  const callId = new URLSearchParams(answer?.body ?? "").get("CallSid") ?? "";
  const answered = (placed.json.delivered ?? []).some((d: { kind: string; status: number }) => d.kind === "answer" && d.status < 300);
  const run = callId
    ? await db
        .select({ id: workflowRuns.id, workflowId: workflowRuns.workflowId })
        .from(workflowRuns)
        .where(and(eq(workflowRuns.orgId, orgId), eq(workflowRuns.providerCallId, callId)))
        .get()
    : undefined;
  return c.json({ call_id: callId, to: number.address, from, answered, run_id: run?.id ?? null, workflow_id: run?.workflowId ?? null }, 200);
});

/** Pressing keys on a live sandbox call (the `workflow` segment, beside the run it belongs to). */
export const sandboxKeysRouter = createRouter().openapi(pressKeys, async (c) => {
  requireLocal(c.env);
  const { workflow_id, run_id } = c.req.valid("param");
  const { digits } = c.req.valid("json");
  const run = await getDb(c.env)
    .select({ provider: workflowRuns.provider, callId: workflowRuns.providerCallId })
    .from(workflowRuns)
    .where(and(eq(workflowRuns.id, run_id), eq(workflowRuns.workflowId, workflow_id), eq(workflowRuns.orgId, c.get("orgId"))))
    .get();
  if (!run) throw notFound("Run");
  if (run.provider !== "sandbox" || !run.callId) throw conflict("Only a live sandbox call's callee can press keys here");
  const pressed = await simulator(c.env, c.req.url, `/calls/${encodeURIComponent(run.callId)}/press`, { digits: digits.toUpperCase() });
  if (pressed.status === 409 || pressed.status === 404) throw conflict(pressed.json?.message ?? "The call is not live in the simulator");
  if (pressed.status !== 200) throw new ApiError(502, `The carrier simulator refused the keys: ${pressed.json?.message ?? pressed.status}`);
  return c.json({ run_id, call_id: run.callId, digits: digits.toUpperCase() }, 200);
});
