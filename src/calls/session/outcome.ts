// What a call session leaves on its run when the call ends: why it ended (at once, before anything slow), then the
// recording and the agent's results in one write (the bulk as the run's details object), and the campaign's
// disposition (through the ports).
import { and, eq, isNull, like, not, or, sql } from "drizzle-orm";
import { workflowRuns } from "../../db/schema";
import { getDb } from "../../lib/db";
import { log } from "../../lib/log";
import { enqueueAfterCall } from "./after-call";
import type { CallPorts } from "./ports";
import { detailsKeyOf, latencySummary, type StoredTurn, writeDetails } from "./details-object";
import { redactResults, runOwner } from "./redaction";
import type { CampaignAttempt } from "./store";
import type { AgentOutcome, EndReason, Turn } from "../../agent/voice-agent";

/** The run's note for an end the transcript does not explain by itself. */
export function endNote(reason: EndReason, o: { silenceMs: number; maxMs: number; detail?: string | null }): string | null {
  const detail = o.detail ? `: ${o.detail}` : "";
  switch (reason) {
    case "callee_silent":
      // The agent's own account (its re-prompts and goodbye) where it ended the call; else the session's limit.
      if (o.detail) return o.detail;
      return `The callee said nothing for ${Math.round(o.silenceMs / 1000)} s; the call was ended`;
    case "max_call_seconds":
      return `The call reached its maximum length of ${Math.round(o.maxMs / 1000)} s and was ended`;
    case "callee_hangup":
      return `The callee hung up${detail}`;
    case "media_error":
      return `The call's media stream failed${detail}; the call was ended`;
    case "media_lost":
      return `The call's media connection was lost${detail} and did not come back; the call was hung up`;
    default:
      return o.detail ?? null;
  }
}

/** An answering machine took the call: on the run at once, not with the outcome (the carrier's final status may come first). */
export async function machineOnRun(env: Env, runId: number): Promise<void> {
  try {
    await getDb(env)
      .update(workflowRuns)
      .set({ answeredBy: "machine_detected" })
      .where(and(eq(workflowRuns.id, runId), or(isNull(workflowRuns.answeredBy), not(like(workflowRuns.answeredBy, "machine%")))))
      .run();
  } catch (err) {
    log("error", "run_update_failed", { run_id: runId, error: String(err) });
  }
}

const appendNote = (note: string) => sql`coalesce(${workflowRuns.notes} || '; ', '') || ${note}`;

/** Why the call ended, on the run at once (the carrier's final status may follow within milliseconds). */
export async function recordEnd(env: Env, runId: number, reason: EndReason, note: string | null): Promise<void> {
  try {
    await getDb(env)
      .update(workflowRuns)
      .set({ endReason: reason, ...(note ? { notes: appendNote(note) } : {}) })
      .where(eq(workflowRuns.id, runId))
      .run();
  } catch (err) {
    log("error", "run_update_failed", { run_id: runId, error: String(err) });
  }
}

export type CallResults = {
  recording: { recordingKey: string; recordingRate: number } | null;
  turns: Turn[];
  outcome: AgentOutcome | null | undefined;
  campaign: CampaignAttempt | null;
};

/**
 * The recording and the agent's small results onto the run (one write), its bulk (transcript, tool calls) as the
 * run's details object first, both redacted where the organization asks; the work after the call queued (analysis,
 * webhook nodes); the disposition to the campaign.
 */
export async function saveResults(env: Env, runId: number, r: CallResults, ports: Pick<CallPorts, "disposition">): Promise<void> {
  const o = r.outcome;
  if (!r.recording && !r.turns.length && !o) return enqueueAfterCall(env, runId);
  const owner = await runOwner(env, runId).catch((err) => {
    log("error", "run_update_failed", { run_id: runId, error: String(err) });
    return null;
  });
  const { transcript, gathered, toolCalls } = redactResults(owner ?? { redact: false, sensitive: new Set() }, {
    transcript: r.turns.map((t) => ({
      role: t.role,
      text: t.text,
      start_ms: t.startMs,
      end_ms: t.endMs,
      interrupted: !!t.interrupted,
      ...(t.timing ? { timing: t.timing } : {}),
    })),
    gathered: o?.gathered ?? null,
    toolCalls: o?.toolCalls,
  });
  const agent = o && {
    gatheredContext: gathered,
    disposition: o.disposition,
    // The agent's AMD class in D1 beside its evidence in the details object, so lists, filters and the CSV read it.
    ...(o.amd ? { amdClass: o.amd.cls } : {}),
    // Appended: the run may already say why its greeting fell back.
    ...(o.note ? { notes: appendNote(o.note) } : {}),
    usage: {
      stt_seconds: round2(o.usage.sttSeconds),
      tts_seconds: round2(o.usage.ttsSeconds),
      input_tokens: o.usage.inputTokens,
      output_tokens: o.usage.outputTokens,
    },
  };
  const bulk = { transcript: transcript.length ? transcript : null, tool_calls: toolCalls?.length ? toolCalls : null };
  let details: { detailsKey?: string; transcript?: StoredTurn[] | null; toolCalls?: Array<Record<string, unknown>> | null } = {};
  if (bulk.transcript || bulk.tool_calls || o?.amd) {
    const key = owner ? detailsKeyOf(owner.orgId, runId) : null;
    try {
      if (!key) throw new Error("the run's organization is not known");
      await writeDetails(env.UPLOADS, key, { ...bulk, analysis: null, ...(o?.nodes?.length ? { nodes: o.nodes } : {}), ...(o?.amd ? { amd: o.amd } : {}) });
      details = { detailsKey: key };
    } catch (err) {
      // Kept in D1 the old way rather than lost; the cron's migration moves it to an object later.
      log("error", "run_details_not_stored", { run_id: runId, error: String(err) });
      details = { transcript: bulk.transcript, toolCalls: bulk.tool_calls };
    }
  }
  try {
    await getDb(env)
      .update(workflowRuns)
      .set({ ...r.recording, ...details, ...(bulk.transcript ? { latency: latencySummary(bulk.transcript) } : {}), ...agent })
      .where(eq(workflowRuns.id, runId))
      .run();
  } catch (err) {
    log("error", "run_update_failed", { run_id: runId, error: String(err) });
  }
  // Analysis and webhook nodes read what was just written.
  await enqueueAfterCall(env, runId);
  if (!r.campaign || (!o?.disposition && !o?.amd)) return;
  try {
    await ports.disposition(r.campaign, runId, o.disposition ?? null, o.amd?.cls ?? null);
  } catch (err) {
    // The run keeps the disposition; only the campaign's count misses it.
    log("error", "campaign_disposition_failed", { run_id: runId, error: String(err) });
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;
