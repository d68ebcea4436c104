// Web calls: talking to an agent from a browser (docs/web-calls.md). Creating one checks the agent and takes a slot
// of the organization's concurrent-call cap and its call-start rate limits like any call, records the run
// (`direction: "web"`, no carrier), prepares its call session and mints a short-lived, single-use token for the
// socket. Opening the socket checks and spends the token before the call session sees it; the session then speaks
// the browser's protocol (session/web-media.ts) as it speaks a carrier's.
import { z } from "@hono/zod-openapi";
import { getDb } from "../../lib/db";
import { CALL_SETTINGS, localDev, requireSettings } from "../../lib/deployment";
import { ApiError, notFound } from "../../lib/errors";
import { publicUrl } from "../../lib/settings";
import { organizationStub } from "../../organizations/organization-object";
import { rateLimited } from "../../organizations/rate-limits";
import { claimNonce, releaseNonce } from "../../telephony/nonces";
import { providerEnvOf } from "../../telephony/provisioning";
import { loadUsableWorkflow, type UsableWorkflow } from "../../workflows";
import { readStreamToken, streamToken } from "../callbacks/callback-urls";
import { createRun, getRun, isFinal, type RunRow } from "../runs/runs";
import { liveAgent } from "../session/agents";
import { SESSION_HEADER } from "../session/protocol";
import { callSessionStub } from "../session/stub";
import { WEB_PROVIDER, WEB_SAMPLE_RATE } from "../session/web-media";
import { sessionStart } from "../start/session-start";
import { SINGLE_CALL_LEASE_SECONDS } from "../start/start";
import { admitEngines, engineBusy, releaseCallEngines, webCallDemand } from "../admission/engine-admission";
import { applyStatus } from "../runs/status";
import { contextWithDefaults, requireVariables } from "../start/variables";
import { usesLocalSpeech } from "../../agent/engines";
import { templateVariables } from "../../workflows";

/** How long a web call's token opens its socket: long enough to allow the microphone prompt, short next to a log's life. */
export const WEB_TOKEN_TTL_SECONDS = 5 * 60;
/** Until the socket opens, the call's slot is held only this long, so an unused token frees it soon. */
const UNOPENED_LEASE_SECONDS = WEB_TOKEN_TTL_SECONDS + 60;
/** Tokens are spent in the replay table under this scheme (configuration 0: a web call has none). */
const SPENT = { configId: 0, scheme: "web-call" };

/** How the caller takes their turns. */
const InputMode = z.enum(["speech", "text"]).openapi({
  description:
    'speech: the agent\'s engines understand the caller\'s speech (typed turns are accepted too); text: they know only clips (local development\'s offline engines, or scripted ones), so the caller types turns ({"type":"text"} messages)',
});

export const WebCallCreated = z
  .object({
    workflow_run_id: z.number().int(),
    workflow_run_name: z.string().openapi({ example: "WR-1042" }),
    websocket_url: z.string().openapi({
      example: "wss://edgedial.example.com/api/v1/web-call/1042/1767225600.9f…",
      description: "Open with a browser WebSocket within expires_at; it carries the single-use token, so treat it as a secret",
    }),
    token: z.string().openapi({ description: "The single-use token inside websocket_url (spent by the first socket that opens it)" }),
    expires_at: z.string().openapi({ description: "When the token stops opening a socket (5 minutes after it was made)" }),
    sample_rate: z.literal(WEB_SAMPLE_RATE).openapi({ description: "Binary frames both ways: 16-bit little-endian mono PCM at this rate" }),
    input_mode: InputMode,
  })
  .openapi("WebCallCreated");

export const WebCallSetup = z
  .object({
    variables: z
      .array(
        z.object({
          name: z.string().openapi({ example: "first_name" }),
          default: z
            .string()
            .nullable()
            .openapi({ description: "The agent's default (template_context_variables), used when the call gives none; null: the call must give one" }),
        }),
      )
      .openapi({ description: "The template variables the agent's prompts and greetings use, in order of first use" }),
    input_mode: InputMode,
    refused: z
      .string()
      .nullable()
      .openapi({ description: "Why a call would be refused now (the agent is archived, or its definition is invalid: the POST's 409), else null" }),
  })
  .openapi("WebCallSetup");

export type WebCallInput = {
  orgId: number;
  workflowId: number;
  initialContext: Record<string, unknown>;
  apiKeyId: number | null;
  origin: string;
};

/** 404/409 for the agent, 422 for a missing template variable, 429 over the call-start rate or at the cap. */
export async function createWebCall(env: Env, input: WebCallInput): Promise<z.infer<typeof WebCallCreated>> {
  requireSettings(env, CALL_SETTINGS);
  const db = getDb(env);
  const workflow = await loadUsableWorkflow(db, input.orgId, input.workflowId);
  const initialContext = requireVariables(workflow, input.initialContext);

  const leaseId = `web:${crypto.randomUUID()}`;
  const lease = await organizationStub(env, input.orgId).acquire({
    leaseId,
    ttlSeconds: UNOPENED_LEASE_SECONDS,
    callStart: { keyId: input.apiKeyId },
  });
  if (lease.rateLimited) throw rateLimited(lease.retryAfterSeconds ?? 1);
  if (!lease.granted) throw new ApiError(429, "Concurrent call limit reached", { "Retry-After": String(Math.max(1, lease.retryAfterSeconds ?? 1)) });
  // A web call always runs the conversation agent: its engines count whatever the deployment's VOICE_AGENT.
  const engines = await admitEngines(env, input.orgId, leaseId, UNOPENED_LEASE_SECONDS, webCallDemand(env, workflow.workflowConfigurations));
  if (!engines.granted) {
    await organizationStub(env, input.orgId).release(leaseId);
    throw engineBusy(engines);
  }

  let run: RunRow;
  try {
    run = await createRun(db, {
      orgId: input.orgId,
      workflowId: workflow.id,
      workflowUuid: workflow.uuid,
      definitionId: workflow.definitionId,
      phoneNumber: "",
      fromNumber: null,
      initialContext,
      telephonyConfigurationId: null,
      provider: WEB_PROVIDER,
      leaseId,
      direction: "web",
      createdByKeyId: input.apiKeyId,
    });
    await callSessionStub(env, run.id).prepare({ agent: "conversation", ...offlineEngines(env, workflow) });
  } catch (err) {
    await organizationStub(env, input.orgId).release(leaseId);
    await releaseCallEngines(env, leaseId);
    throw err;
  }

  const token = await streamToken(env.CALLBACK_SECRET, WEB_PROVIDER, run.id, WEB_TOKEN_TTL_SECONDS);
  const base = providerEnvOf(env, input.origin).publicBaseUrl;
  return {
    workflow_run_id: run.id,
    workflow_run_name: run.name,
    websocket_url: publicUrl(base, webCallPath(run.id, token)).replace(/^http/, "ws"),
    token,
    expires_at: new Date(Number(token.split(".")[0]) * 1000).toISOString(),
    sample_rate: WEB_SAMPLE_RATE,
    input_mode: inputMode(env, workflow),
  };
}

/** What a page asks before a web call: the variables to fill (with the agent's defaults) and how the caller talks. */
export async function webCallSetup(env: Env, orgId: number, workflowId: number): Promise<z.infer<typeof WebCallSetup>> {
  let workflow: UsableWorkflow;
  try {
    workflow = await loadUsableWorkflow(getDb(env), orgId, workflowId);
  } catch (err) {
    // An agent still being built is a normal page to show: the reason a call would be refused, not an error.
    if (err instanceof ApiError && err.status === 409) return { variables: [], input_mode: "speech", refused: err.message };
    throw err;
  }
  const names = templateVariables(workflow.definition);
  const filled = contextWithDefaults(workflow, {});
  return {
    variables: names.map((name) => ({ name, default: filled[name] === undefined ? null : String(filled[name]) })),
    input_mode: inputMode(env, workflow),
    refused: null,
  };
}

/**
 * Text where the call's speech-to-text understands no speech, only known clips: local development's stand-ins for
 * Workers AI (engines.ts usesLocalSpeech, or this module's offline agent) and a scripted one (the demo's, which hears
 * only its recordings). Workers AI and a keyed provider understand speech.
 */
function inputMode(env: Env, workflow: UsableWorkflow): "speech" | "text" {
  const va = (workflow.workflowConfigurations as { voice_agent?: { stt?: { provider?: string }; tts?: unknown } } | null)?.voice_agent;
  if (va?.stt?.provider === "scripted") return "text";
  // A web call always runs the conversation agent, whatever the deployment's VOICE_AGENT.
  return usesLocalSpeech(env, va) || Object.keys(offlineEngines(env, workflow)).length ? "text" : "speech";
}

export const webCallPath = (runId: number, token: string) => `/api/v1/web-call/${runId}/${token}`;

/**
 * Local development without Workers AI (`npm run dev` without `--workers-ai`): an agent left on the default Workers AI
 * engines talks on the deterministic ones instead (a scripted model, tones for speech), so the button works offline.
 * An agent that names its own model (scripted, or an OpenAI-compatible endpoint) keeps it.
 */
function offlineEngines(env: Env, workflow: UsableWorkflow) {
  if (!localDev(env) || liveAgent(env) === "conversation") return {};
  const va = (workflow.workflowConfigurations as { voice_agent?: { llm?: { provider?: string } } } | null)?.voice_agent;
  if (va?.llm?.provider && va.llm.provider !== "workers-ai") return {};
  return { scripted: { script: [{ say: "This is the offline agent. Start the service with --workers-ai to talk to the model." }], clips: [] } };
}

/**
 * The web call's socket: 401 for a forged or expired token, 404 for a run that is not a web call, 409 for one that
 * ended, 426 without an upgrade, 403 for a token already spent; else the upgrade goes to the run's call session.
 */
export async function openWebCall(env: Env, request: Request, runId: number, token: string): Promise<Response> {
  requireSettings(env, CALL_SETTINGS);
  const check = await readStreamToken(env.CALLBACK_SECRET, WEB_PROVIDER, runId, token);
  if (!check.ok) throw new ApiError(401, check.reason === "expired" ? "This web call's token has expired" : "Invalid web call token");
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") throw new ApiError(426, "Expected a WebSocket upgrade");
  const run = await getRun(getDb(env), runId);
  if (run?.direction !== "web") throw notFound("Web call");
  if (isFinal(run.status)) throw new ApiError(409, "This call has ended");
  const key = { scheme: SPENT.scheme, nonce: check.nonce, expiresAtMs: check.expiresAtMs };
  if (!(await claimNonce(env, SPENT.configId, key))) throw new ApiError(403, "This web call's token was already used");
  try {
    // The call is on: its slot is now held for as long as any call may last (its final status frees it).
    const lease = run.leaseId ? await organizationStub(env, run.orgId).acquire({ leaseId: run.leaseId, ttlSeconds: SINGLE_CALL_LEASE_SECONDS }) : null;
    if (lease && !lease.granted) throw new ApiError(429, "Concurrent call limit reached", { "Retry-After": String(Math.max(1, lease.retryAfterSeconds ?? 1)) });
    const answered = (await applyStatus(env, run, { status: "in_progress" })).run;
    const headers = new Headers(request.headers);
    headers.set(SESSION_HEADER, JSON.stringify(await sessionStart(env, answered, WEB_PROVIDER)));
    const res = await callSessionStub(env, run.id).fetch(new Request(request.url, { headers }));
    if (res.status === 101) return res;
    const { detail } = await res.json<{ detail: string }>();
    throw new ApiError(res.status as 409, detail);
  } catch (err) {
    await releaseNonce(env, SPENT.configId, key);
    throw err;
  }
}
