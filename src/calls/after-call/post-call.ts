// After a call (a queue message its session sent as it ended): the agent's post-call analysis into the run's
// details object (the transcript it reads is there too), with
// the disposition it may give and `run.analyzed`; the disposition and a callback time to the run's campaign; then the
// agent's webhook nodes, their bodies rendered from the call. Each part is done once per run however often the
// message comes (the analysis is written only where none is; a node's delivery only where none exists).
// An analysis on Workers AI first takes a token from the engine capacity object, so it waits in the queue while live
// calls use the budget (docs/capacity.md): refused, nothing of the message but the recording's measuring (once per run,
// heard-latency.ts) has run, and it comes back later whole.
import { and, eq, isNull } from "drizzle-orm";
import { workflowDefinitions, workflowRuns, workflows } from "../../db/schema";
import { analyzeCall } from "../../agent/analysis";
import { modelFor } from "../../agent/engines";
import { clock, isoNow } from "../../lib/clock";
import { getDb } from "../../lib/db";
import { publicBaseUrl } from "../../lib/deployment";
import { isObject } from "../../lib/helpers";
import { log } from "../../lib/log";
import { takeAnalysisToken } from "../../capacity/admission";
import { allowsPrivatePbx } from "../../telephony/calling-policy";
import { NODE_DELIVERY_EVENT } from "../../webhooks/events";
import { queueNodeDeliveries } from "../../webhooks/node-deliveries";
import { renderPayload } from "../../webhooks/node-template";
import { emitRunAnalyzed } from "../../webhooks/run-events";
import { analysisSettingsOf, type RunAnalysis } from "../../workflows/analysis-schema";
import { parseStoredDefinition } from "../../workflows/store";
import { webhookNodesOf } from "../../workflows/webhook-node";
import { campaignPort } from "../campaign/campaign-port";
import { analysisEngineOf } from "../admission/engine-admission";
import { measureHeardGaps } from "./heard-latency";
import { recordingUrl } from "../runs/recordings";
import { storeAnalysis, withDetails } from "../runs/run-details";
import type { RunRow } from "../runs/runs";
import { type AfterCallMessage, isAfterCall } from "../session/after-call";

/** The disposition whose `callback_at` asks the campaign to call again then. */
export const CALL_BACK_LATER = "call_back_later";
const MAX_TRIES = 3;
/**
 * How long an analysis waits for engine capacity before it runs anyway (logged): a deployment whose calls hold the
 * whole budget for hours would otherwise never analyse, and a late answer beats none.
 */
export const MAX_CAPACITY_WAIT_SECONDS = 6 * 3600;

/** The message as it comes back after waiting for capacity: `waited` seconds so far. */
type AfterCallBody = AfterCallMessage & { afterCall: { waited?: number } };

/** What a webhook node's template can name: the call's values (the contact's and gathered ones also at the top). */
export function nodeValues(run: RunRow, recording: string | null): Record<string, unknown> {
  const transcript = (run.transcript ?? []).map((t) => ({ role: t.role, text: t.text, start_ms: t.start_ms, end_ms: t.end_ms }));
  return {
    ...(run.initialContext ?? {}),
    ...(run.gatheredContext ?? {}),
    run_id: run.id,
    run_name: run.name,
    workflow_id: run.workflowId,
    workflow_uuid: run.workflowUuid,
    campaign_id: run.campaignId,
    direction: run.direction,
    phone_number: run.phoneNumber,
    from_number: run.fromNumber,
    status: run.status,
    end_reason: run.endReason,
    started_at: run.startedAt,
    answered_at: run.answeredAt,
    ended_at: run.endedAt,
    duration_seconds: run.durationSeconds,
    initial_context: run.initialContext ?? {},
    gathered_context: run.gatheredContext ?? {},
    disposition: run.disposition,
    transcript,
    transcript_text: transcript.map((t) => `${t.role === "agent" ? "Agent" : "Callee"}: ${t.text}`).join("\n"),
    recording_url: recording,
    analysis: run.analysis ?? null,
  };
}

async function loadRun(env: Env, runId: number) {
  return getDb(env)
    .select({
      run: workflowRuns,
      definition: workflowDefinitions.definition,
      configurations: workflows.workflowConfigurations,
      codes: workflows.callDispositionCodes,
    })
    .from(workflowRuns)
    .leftJoin(workflowDefinitions, eq(workflowDefinitions.id, workflowRuns.definitionId))
    .leftJoin(workflows, eq(workflows.id, workflowRuns.workflowId))
    .where(eq(workflowRuns.id, runId))
    .get();
}

/** The analysis, where the agent asks for one and the call was a conversation; the run as it then is. */
async function analyze(env: Env, run: RunRow, configurations: unknown, codes: string[]): Promise<RunRow> {
  const settings = analysisSettingsOf(configurations);
  if (!settings || run.analysis || run.analysisStatus || !run.transcript?.length) return run;
  const db = getDb(env);
  const m = await modelFor(env, run.orgId, configurations, () => allowsPrivatePbx(db, run.orgId));
  const analysis: RunAnalysis = m.ok
    ? await analyzeCall(
        m.model,
        settings,
        { turns: run.transcript, gathered: run.gatheredContext, disposition: run.disposition, dispositionCodes: codes, variables: run.initialContext ?? {} },
        isoNow,
      )
    : { status: "failed", summary: null, data: null, success: null, success_reason: null, error: m.reason, attempts: 0, analyzed_at: isoNow() };
  // The agent's own choice stands; the analysis fills a disposition it did not choose (one of its codes, if it has any).
  const proposed = analysis.data?.disposition;
  const fill = !run.disposition && typeof proposed === "string" && (!codes.length || codes.includes(proposed)) ? proposed : null;
  // The row claims the analysis (once per run however often the message comes); its body goes into the run's details
  // object, or into the old column where the run's bulk is still in D1.
  const claimed = await db
    .update(workflowRuns)
    .set({ analysisStatus: analysis.status, ...(run.detailsKey ? {} : { analysis }), ...(fill ? { disposition: fill } : {}) })
    .where(and(eq(workflowRuns.id, run.id), isNull(workflowRuns.analysis), isNull(workflowRuns.analysisStatus)))
    .returning()
    .get();
  if (!claimed) {
    const now = (await loadRun(env, run.id))?.run;
    return now ? withDetails(env, now) : run;
  }
  try {
    await storeAnalysis(env, claimed, analysis);
  } catch (err) {
    // Unclaimed again, so the queue's retry analyzes it anew rather than leave a status without its body.
    await db.update(workflowRuns).set({ analysisStatus: null }).where(eq(workflowRuns.id, run.id)).run();
    throw err;
  }
  const updated = { ...claimed, transcript: run.transcript, toolCalls: run.toolCalls, analysis };
  await emitRunAnalyzed(env, updated, analysis);
  await tellCampaign(env, updated, analysis);
  return updated;
}

/** The run's campaign hears the disposition (again, with the callback time the analysis found, where it asks for one). */
async function tellCampaign(env: Env, run: RunRow, analysis: RunAnalysis): Promise<void> {
  if (run.campaignId == null || run.contactId == null || run.attempt == null || !run.disposition) return;
  const at = analysis.data?.callback_at;
  const callbackAt = run.disposition === CALL_BACK_LATER && typeof at === "string" && Number.isFinite(Date.parse(at)) ? new Date(at).toISOString() : null;
  try {
    await campaignPort(env, run.campaignId).onRunOutcome({
      runId: run.id,
      contactId: run.contactId,
      attempt: run.attempt,
      disposition: run.disposition,
      callbackAt,
    });
  } catch (err) {
    log("error", "campaign_disposition_failed", { run_id: run.id, error: String(err) });
  }
}

/** The agent's after-call webhook nodes, queued (once each). */
async function fireNodes(env: Env, run: RunRow, definition: unknown): Promise<void> {
  const nodes = webhookNodesOf(typeof definition === "string" ? parseStoredDefinition(definition) : definition);
  if (!nodes.length) return;
  const base = publicBaseUrl(env);
  const recording = run.recordingKey && base && env.CALLBACK_SECRET ? await recordingUrl(env.CALLBACK_SECRET, base, run.id, clock.now()) : null;
  const values = nodeValues(run, recording);
  const firings = nodes.map((n) => ({
    nodeId: n.id,
    url: n.url,
    endpointId: n.endpointId,
    // Without a template: the Standard Webhooks envelope around every value.
    body: JSON.stringify(
      n.payloadTemplate == null
        ? { type: NODE_DELIVERY_EVENT, timestamp: isoNow(), data: { node_id: n.id, ...values } }
        : renderPayload(n.payloadTemplate, values),
    ),
  }));
  for (const d of await queueNodeDeliveries(env, run.orgId, run.id, firings)) {
    if (d.problem) log("warning", "webhook_node_not_sent", { run_id: run.id, node_id: d.nodeId, reason: d.problem });
  }
}

/** Whether the run still needs the agent's analysis (judged from D1, before its details object is read). */
const awaitsAnalysis = (run: RunRow, configurations: unknown) =>
  !!analysisSettingsOf(configurations) && !run.analysis && !run.analysisStatus && (!!run.detailsKey || !!run.transcript?.length);

/**
 * The after-call work of one run; `{ waitSeconds }` when its analysis has no engine capacity yet (only the recording
 * measured).
 * `waited`: seconds it already waited; past MAX_CAPACITY_WAIT_SECONDS it runs without a token.
 */
export async function afterCall(env: Env, runId: number, waited = 0): Promise<{ waitSeconds?: number }> {
  const row = await loadRun(env, runId);
  if (!row) return {};
  // The gaps the caller heard, from the recording (once per run): before the wait for engine capacity, which they
  // do not need, so a busy deployment's latency figures are not hours late.
  await measureHeardGaps(env, row.run);
  if (awaitsAnalysis(row.run, row.configurations)) {
    const token = await takeAnalysisToken(env, analysisEngineOf(row.configurations));
    if (!token.ok && waited < MAX_CAPACITY_WAIT_SECONDS) return { waitSeconds: Math.max(1, token.retryAfterSeconds) };
    if (!token.ok) log("warning", "analysis_capacity_wait_exceeded", { run_id: runId, waited_seconds: waited });
  }
  const listed = isObject(row.codes) ? row.codes.disposition_codes : null;
  const codes = Array.isArray(listed) ? listed.filter((c): c is string => typeof c === "string") : [];
  const run = await analyze(env, await withDetails(env, row.run), row.configurations, codes);
  await fireNodes(env, run, row.definition);
  return {};
}

/**
 * Puts a message that waits for engine capacity back on the queue with the delay the capacity object gave. A fresh
 * copy (and the original acknowledged) rather than `retry()`: a retry counts against the queue's max_retries (10,
 * wrangler.jsonc) and against MAX_TRIES below, so a long busy spell would drop the work or fail it on its first error.
 * Sent twice by a crash between the two is harmless: each part runs once per run.
 */
async function waitForCapacity(env: Env, m: Message<unknown>, body: AfterCallBody, waitSeconds: number): Promise<void> {
  const again: AfterCallBody = { afterCall: { ...body.afterCall, waited: (body.afterCall.waited ?? 0) + waitSeconds } };
  try {
    await (env.WEBHOOKS as unknown as Queue<AfterCallBody>).send(again, { delaySeconds: waitSeconds });
    m.ack();
  } catch (err) {
    log("warning", "after_call_requeue_failed", { run_id: body.afterCall.runId, error: String(err) });
    m.retry({ delaySeconds: waitSeconds });
  }
}

/** The queue's after-call messages (the rest of the batch is the webhook deliveries'). */
export async function runAfterCalls(messages: readonly Message<unknown>[], env: Env): Promise<void> {
  await Promise.all(
    messages.map(async (m) => {
      const body = m.body as AfterCallBody;
      try {
        const { waitSeconds } = await afterCall(env, body.afterCall.runId, body.afterCall.waited ?? 0);
        if (waitSeconds) await waitForCapacity(env, m, body, waitSeconds);
        else m.ack();
      } catch (err) {
        log("error", "after_call_failed", { body: m.body, attempt: m.attempts, error: String(err) });
        if (m.attempts >= MAX_TRIES) m.ack();
        else m.retry({ delaySeconds: 30 * m.attempts });
      }
    }),
  );
}

export { isAfterCall };
