// A call dialed in to one of an organization's numbers, once its request was proven (the configuration's inbound
// token and the carrier's signature, src/calls/inbound/inbound.routes.ts). A new call finds its number and agent, takes a
// lease on the organization's concurrent-call cap, becomes a run (`direction: "inbound"`) and is answered with the
// carrier's media document, so its call session and voice agent run exactly as for an outbound call that was
// answered. A number that takes no calls gets a polite message and a hang-up; over the cap, the carrier's busy form.
// Later requests about the same call (its status, a retried answer request) go to its run.
import { and, eq } from "drizzle-orm";
import { workflowRuns } from "../../db/schema";
import { getDb } from "../../lib/db";
import { log } from "../../lib/log";
import type { ConfigContext, InboundCall, Provider, ProviderCalls } from "../../telephony/providers/types";
import type { ConfigRow } from "../../telephony/view";
import { greetingFor } from "../start/greeting";
import { admitInbound } from "./inbound-admit";
import { NOT_IN_SERVICE } from "./inbound-rules";
import { mediaDocumentFor } from "../resume/resume";
import { isFinal, type RunRow } from "../runs/runs";
import { liveAgent } from "../session/agents";
import { callbackUrls } from "../callbacks/callback-urls";
import { providerEnvOf } from "../../telephony/provisioning";
import { callSessionStub } from "../session/stub";
import { MEDIA_WAIT_MS } from "../session/run-final";
import { applyStatus } from "../runs/status";

export type Doc = { body: string; contentType: string };
/** What the carrier is answered: a document, or nothing to say (204). */
export type InboundReply = { doc: Doc } | { doc: null };

type Inbound = { env: Env; requestUrl: string; row: ConfigRow; ctx: ConfigContext; provider: Provider; calls: ProviderCalls };

const hangUp = (calls: ProviderCalls, text: string): InboundReply => ({ doc: calls.answerDocument(text) });

/** A caller no agent takes: the apology and a hang-up, by document or (Telnyx) by commands. */
async function refuse(i: Inbound, call: InboundCall): Promise<InboundReply> {
  const commands = i.calls.inbound!.commands;
  if (!commands) return hangUp(i.calls, NOT_IN_SERVICE);
  await commands.refuse(i.ctx, providerEnvOf(i.env, i.requestUrl), call, NOT_IN_SERVICE);
  return { doc: null };
}

/** The run a carrier's call id already names (a retried answer request, or the call's later status). */
async function runOfCall(env: Env, row: ConfigRow, callId: string): Promise<RunRow | null> {
  return (
    (await getDb(env)
      .select()
      .from(workflowRuns)
      .where(and(eq(workflowRuns.telephonyConfigurationId, row.id), eq(workflowRuns.providerCallId, callId), eq(workflowRuns.direction, "inbound")))
      .get()) ?? null
  );
}

/** A verified request to the configuration's inbound URL. */
export async function inboundRequest(i: Inbound, request: Request, rawBody: string): Promise<InboundReply> {
  const inbound = i.calls.inbound!;
  const call = inbound.read(request, rawBody);
  const updates = await i.calls.parseStatus(request, rawBody);
  const callId = call?.callId ?? updates.find((u) => u.providerCallId)?.providerCallId;
  const existing = callId ? await runOfCall(i.env, i.row, callId) : null;
  if (existing) return followUp(i, existing, call, updates);
  if (call) return newCall(i, call);
  // An event about no call of ours (one refused busy, or another carrier object); a refused call's own events
  // drive its apology on command-driven carriers.
  await inbound.commands?.event(i.ctx, providerEnvOf(i.env, i.requestUrl), rawBody, NOT_IN_SERVICE);
  return { doc: null };
}

/** A request about a call that already has its run: its status applied; a repeated answer request answered again. */
async function followUp(i: Inbound, run: RunRow, call: InboundCall | null, updates: Awaited<ReturnType<ProviderCalls["parseStatus"]>>) {
  let now = run;
  for (const u of updates) {
    // The carrier's ringing/in-progress of the answer request says nothing new: the run was answered when created.
    if (!isFinal(u.status)) continue;
    now = (await applyStatus(i.env, now, { ...u, providerCallId: undefined })).run;
  }
  if (isFinal(now.status) && !isFinal(run.status) && liveAgent(i.env)) {
    // The caller hung up: the session ends now rather than wait out its socket.
    await callSessionStub(i.env, run.id)
      .carrierEnded()
      .catch((err) => log("error", "call_end_not_handed_over", { run_id: run.id, error: String(err) }));
  }
  if (call && !isFinal(now.status)) return answer(i, now, call);
  return { doc: null };
}

/** The agent answers: its media document, or without a voice agent on the media path the greeting and a hang-up. */
async function answer(i: Inbound, run: RunRow, call: InboundCall): Promise<InboundReply> {
  const commands = i.calls.inbound!.commands;
  if (commands) {
    // Command-driven (Telnyx): answered with the stream on, its later events to the run's status URL, where the
    // outbound path takes them (the greeting spoken by command without a voice agent, a stopped stream restarted).
    const urls = await callbackUrls(i.env.CALLBACK_SECRET, providerEnvOf(i.env, i.requestUrl).publicBaseUrl, i.provider.name, run.id);
    try {
      await commands.answer(i.ctx, providerEnvOf(i.env, i.requestUrl), call, {
        runId: run.id,
        streamUrl: liveAgent(i.env) ? urls.streamUrl : null,
        statusUrl: urls.statusUrl,
      });
      if (liveAgent(i.env)) await watchMedia(i.env, run);
    } catch (err) {
      const error = String((err as Error)?.message ?? err).slice(0, 500);
      log("error", "inbound_answer_failed", { provider: i.provider.name, run_id: run.id, error });
      await applyStatus(i.env, run, { status: "failed", error });
    }
    return { doc: null };
  }
  if (liveAgent(i.env) && i.calls.mediaDocument) {
    const doc = await mediaDocumentFor(i.env, i.requestUrl, i.calls, i.provider.name, run.id);
    await watchMedia(i.env, run);
    return { doc };
  }
  return hangUp(i.calls, await greetingFor(getDb(i.env), run));
}

/**
 * The answered call's media must connect within MEDIA_WAIT_MS, or its session hangs it up and ends the run
 * (src/calls/session/run-final.ts): an admitted call never holds its slot for the watchdog's hour.
 */
async function watchMedia(env: Env, run: RunRow): Promise<void> {
  try {
    await callSessionStub(env, run.id).awaitMedia({ orgId: run.orgId, runId: run.id, at: Date.now() + MEDIA_WAIT_MS });
  } catch (err) {
    // Not armed: the cron's watchdog still ends the run, later.
    log("error", "media_wait_not_armed", { run_id: run.id, error: String(err) });
  }
}

async function newCall(i: Inbound, call: InboundCall): Promise<InboundReply> {
  const commands = i.calls.inbound!.commands;
  // Answered now: the carrier asks for the document only once it has the call. A command-driven carrier's call
  // rings until our answer command; its call.answered (at the run's status URL) makes it in progress.
  const admitted = await admitInbound(i.env, i.row, i.provider.name, call, commands ? "ringing" : "in_progress");
  if (admitted.ok) return answer(i, admitted.run, call);
  if (admitted.reason !== "concurrent_call_limit") return refuse(i, call);
  if (commands) {
    await commands.busy(i.ctx, providerEnvOf(i.env, i.requestUrl), call);
    return { doc: null };
  }
  return { doc: i.calls.inbound!.busyDocument() ?? i.calls.answerDocument("") };
}
