// The calls module's entry points for starting a call: single calls (the public endpoints) and campaign
// calls (the engine). Both resolve the configuration and caller ID, create the run, and originate through
// the provider module; a carrier refusal leaves the run `failed` with the carrier's message.
import { sql } from "drizzle-orm";
import { getDb } from "../../lib/db";
import { isoNow } from "../../lib/clock";
import { CALL_SETTINGS, requireSettings, settingProblems } from "../../lib/deployment";
import { problemsDetail } from "../../lib/settings";
import { ApiError, conflict, invalid } from "../../lib/errors";
import { classifyE164, normalizeNumber, readDialable } from "../../telephony/numbers";
import { destinationRefusal } from "../../telephony/calling-policy";
import { REFUSED_TYPE } from "../../telephony/destination-policy";
import { pbxTemplatesOf } from "../../telephony/pbx-destinations";
import { callerIdOf, loadConfigContext, resolveTelephonyConfig, type ResolvedConfig } from "../../telephony/resolve";
import type { OriginateResult } from "../../telephony/providers/types";
import { loadUsableWorkflow, type UsableWorkflow } from "../../workflows";
import type { CallStartResult, CampaignCallRequest } from "../campaign/campaign-calls";
import { MAX_CALL_SECONDS, TIMEOUT_GRACE_SECONDS } from "../campaign/call-length";
import { liveAgent } from "../session/agents";
import { organizationStub } from "../../organizations/organization-object";
import { rateLimited } from "../../organizations/rate-limits";
import { callbackUrls } from "../callbacks/callback-urls";
import { log } from "../../lib/log";
import { campaignCallIds } from "../runs/campaign-call-ids";
import { providerEnvOf } from "../../telephony/provisioning";
import { createRun, getOrgRun, type RunRow } from "../runs/runs";
import { admitEngines, callDemandOf, engineBusy, releaseCallEngines } from "../admission/engine-admission";
import { applyStatus } from "../runs/status";
import { contextWithDefaults, requireVariables } from "./variables";

/** A single call's lease outlives the longest call plus the engine's grace, so a lost final status frees it. */
export const SINGLE_CALL_LEASE_SECONDS = MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS;

export const NOT_READY = "Telephony configuration is not ready for outbound calls";

/** Readiness is enforced at dial time: 409 with the first incomplete step (or inactivity). */
export function requireReady(cfg: ResolvedConfig): void {
  if (!cfg.ready) throw conflict(`${NOT_READY}: ${cfg.blockedReason ?? "setup incomplete"}`);
}

/** Asks the carrier; any throw (a bug, a bad key) becomes a refusal in the carrier's place, never a 500. */
async function originate(env: Env, cfg: ResolvedConfig, run: RunRow, publicBaseUrl: string): Promise<OriginateResult> {
  const provider = cfg.provider;
  const calls = provider.calls;
  if (!calls) return { ok: false, message: `Calls are not supported for provider ${provider.name}` };
  const urls = await callbackUrls(env.CALLBACK_SECRET, publicBaseUrl, provider.name, run.id);
  try {
    const ctx = await loadConfigContext(env, cfg.row, cfg.numbers);
    const ready = await calls.lifecycle?.beforeOriginate(env, ctx, run.id);
    if (ready && !ready.ok) return ready;
    const result = await calls.originate(ctx, providerEnvOf(env, publicBaseUrl), {
      runId: run.id,
      to: run.phoneNumber,
      from: run.fromNumber,
      ...urls,
      liveMedia: liveAgent(env) !== null,
    });
    if (!result.ok) await calls.lifecycle?.originateFailed(env, ctx, run.id);
    return result;
  } catch (err) {
    // log() redacts: a carrier's error may echo the callback URLs it was given.
    log("error", "originate_threw", { provider: provider.name, run_id: run.id, error: String(err) });
    return { ok: false, message: `Could not place the call: ${(err as Error)?.message ?? String(err)}` };
  }
}

/** Records the originate outcome on the run (monotonic: a callback may already have moved it on). */
async function recordOriginate(env: Env, run: RunRow, result: OriginateResult): Promise<RunRow> {
  if (result.ok) {
    return (await applyStatus(env, run, { status: "initiated", providerCallId: result.providerCallId })).run;
  }
  return (await applyStatus(env, run, { status: "failed", error: result.message, durationSeconds: 0 })).run;
}

export type SingleCallInput = {
  orgId: number;
  workflow: UsableWorkflow;
  phoneNumber: string;
  initialContext: Record<string, unknown>;
  telephonyConfigurationId?: number | null;
  /** ISO 3166 alpha-2: a number without + is read as a national number of this country. */
  defaultCountry?: string | null;
  /** The API key that asked: its call-start bucket is charged (and null charges the organization's only). */
  apiKeyId?: number | null;
  /** The request's origin, used for callback URLs when PUBLIC_BASE_URL is not set. */
  origin: string;
};

export type SingleCallResult =
  | { status: 200; body: { status: "initiated"; workflow_run_id: number; workflow_run_name: string } }
  | { status: 502; body: { detail: string } };

/**
 * A single call: 404/409 from resolution, 422 for a number this configuration cannot dial,
 * 429 over a call-start rate limit or at the organization's concurrent-call cap, 502 when the carrier refuses (the run is kept, `failed`).
 */
export async function startSingleCall(env: Env, input: SingleCallInput): Promise<SingleCallResult> {
  requireSettings(env, CALL_SETTINGS); // 503 naming what the deployment lacks, before anything is written
  const cfg = await resolveTelephonyConfig(env, input.orgId, input.telephonyConfigurationId);
  requireReady(cfg);
  // With default_country a national number is dialed as its E.164 form; without, a national number's 422 suggests
  // the form it has in the caller ID's country (looked up only then).
  let number = readDialable(input.phoneNumber, cfg.provider.pbx, { defaultCountry: input.defaultCountry });
  if (!number.ok && !input.defaultCountry && !cfg.provider.pbx) {
    const from = callerIdOf(cfg);
    number = readDialable(input.phoneNumber, false, { suggestCountry: from ? classifyE164(from)?.country : null });
  }
  if (!number.ok) throw invalid(["body", "phone_number"], number.message, "value_error", input.phoneNumber, "ctx" in number ? number.ctx : undefined);
  const refused = await destinationRefusal(getDb(env), input.orgId, number.value, pbxTemplatesOf(cfg));
  if (refused) throw invalid(["body", "phone_number"], refused.message, REFUSED_TYPE, input.phoneNumber, refused.ctx);
  const initialContext = requireVariables(input.workflow, input.initialContext);
  const from = callerIdOf(cfg);

  const leaseId = `single:${crypto.randomUUID()}`;
  const lease = await organizationStub(env, input.orgId).acquire({
    leaseId,
    ttlSeconds: SINGLE_CALL_LEASE_SECONDS,
    callStart: { keyId: input.apiKeyId ?? null },
    // Refused when suppressed; not counted towards the number's attempt cap, which is on campaign dials only
    // (docs/calling-rules.md): an operator's own calls must not hold a campaign's contact back.
    dial: { number: number.value, count: false },
  });
  if (lease.skip === "suppressed") {
    throw invalid(["body", "phone_number"], "The number is on the organization's suppression list", "number_suppressed", input.phoneNumber);
  }
  if (lease.rateLimited) throw rateLimited(lease.retryAfterSeconds ?? 1);
  if (!lease.granted) {
    const retry = String(Math.max(1, lease.retryAfterSeconds ?? 1));
    throw new ApiError(429, "Concurrent call limit reached", { "Retry-After": retry });
  }
  // The engines the agent needs, counted after the organization's cap (a call it refuses takes no engine room).
  const engines = await admitEngines(env, input.orgId, leaseId, SINGLE_CALL_LEASE_SECONDS, callDemandOf(env, input.workflow.workflowConfigurations));
  if (!engines.granted) {
    await organizationStub(env, input.orgId).release(leaseId, true);
    throw engineBusy(engines);
  }

  let run: RunRow;
  try {
    run = await createRun(getDb(env), {
      orgId: input.orgId,
      workflowId: input.workflow.id,
      workflowUuid: input.workflow.uuid,
      definitionId: input.workflow.definitionId,
      phoneNumber: number.value,
      fromNumber: from,
      initialContext,
      telephonyConfigurationId: cfg.id,
      provider: cfg.provider.name,
      leaseId,
      createdByKeyId: input.apiKeyId ?? null,
    });
  } catch (err) {
    await organizationStub(env, input.orgId).release(leaseId);
    await releaseCallEngines(env, leaseId);
    throw err;
  }

  const publicBaseUrl = providerEnvOf(env, input.origin).publicBaseUrl;
  const result = await originate(env, cfg, run, publicBaseUrl);
  run = await recordOriginate(env, run, result);
  if (!result.ok) return { status: 502, body: { detail: result.message } };
  return { status: 200, body: { status: "initiated", workflow_run_id: run.id, workflow_run_name: run.name } };
}

/**
 * The campaign engine's entry point. The engine holds the organization lease (`req.leaseId`); it is recorded
 * on the run so the final status frees it, and never acquired twice. Nothing throws for an expected problem.
 */
export async function startCampaignCall(env: Env, req: CampaignCallRequest): Promise<CallStartResult> {
  // No request here: the base must be configured even in local development.
  const missing = settingProblems(env, CALL_SETTINGS, { requestOrigin: false });
  if (missing.length) return { ok: false, runId: null, kind: "config", message: problemsDetail(missing) };
  const publicBaseUrl = providerEnvOf(env).publicBaseUrl;
  let cfg: ResolvedConfig;
  let workflow: UsableWorkflow;
  try {
    cfg = await resolveTelephonyConfig(env, req.orgId, req.telephonyConfigurationId);
    requireReady(cfg);
    workflow = await loadUsableWorkflow(getDb(env), req.orgId, req.workflowId);
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, runId: null, kind: "config", message: String(err.detail) };
    throw err;
  }
  const number = normalizeNumber(req.phoneNumber, cfg.provider.pbx);
  if (!number.ok) return { ok: false, runId: null, kind: "invalid_number", message: number.message };
  // The policy may have changed since the campaign was created: checked again before every dial.
  const refused = await destinationRefusal(getDb(env), req.orgId, number.value, pbxTemplatesOf(cfg));
  if (refused) return { ok: false, runId: null, kind: "destination_refused", message: refused.message };

  const run = await createRun(getDb(env), {
    orgId: req.orgId,
    workflowId: workflow.id,
    workflowUuid: workflow.uuid,
    definitionId: workflow.definitionId,
    campaignId: req.campaignId,
    contactId: req.contactId,
    attempt: req.attempt,
    phoneNumber: number.value,
    fromNumber: callerIdOf(cfg),
    // The agent's defaults fill the contact's empty columns (checked at import: a column without one is never empty).
    initialContext: contextWithDefaults(workflow, req.initialContext),
    telephonyConfigurationId: cfg.id,
    provider: cfg.provider.name,
    leaseId: req.leaseId ?? null,
    greetingOverride: req.greetingOverride,
    voicemailAction: req.voicemailAction ?? null,
    createdByKeyId: sql`(SELECT created_by_key_id FROM campaigns WHERE id = ${req.campaignId})`,
    // Recorded as placed from the start: the carrier's acceptance writes nothing to D1 (its call id goes back to the
    // campaign's object, which keeps the attempt), so an answered call's record is written three times, not four.
    status: "initiated",
    startedAt: isoNow(),
  });
  const result = await originate(env, cfg, run, publicBaseUrl);
  if (result.ok) return { ok: true, runId: run.id, providerCallId: result.providerCallId };
  const after = await recordOriginate(env, run, result);
  return { ok: false, runId: after.id, kind: "carrier_refused", message: result.message };
}

/** Hangs up a call we placed, through its carrier; an already-ended call is fine. */
export async function hangupRun(env: Env, orgId: number, runId: number): Promise<void> {
  const db = getDb(env);
  const run = await getOrgRun(db, orgId, runId);
  if (!run?.telephonyConfigurationId) return;
  // A campaign call whose answer was not recorded (its callback lost or still on its way) has its id in its campaign.
  const callId = run.providerCallId ?? (await campaignCallIds(env, [run])).get(run.id);
  if (!callId) return;
  const cfg = await resolveTelephonyConfig(env, orgId, run.telephonyConfigurationId);
  const ctx = await loadConfigContext(env, cfg.row, cfg.numbers);
  await cfg.provider.calls?.lifecycle?.beforeHangup(env, ctx, callId);
  await cfg.provider.calls?.hangup(ctx, providerEnvOf(env), callId);
}
