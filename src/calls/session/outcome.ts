// What a call session leaves on its run when the call ends: why it ended (at once, before anything slow), then the
// recording, transcript and the agent's results in one write, and the campaign's disposition (through the ports).
import { and, eq, isNull, like, not, or, sql } from "drizzle-orm";
import { workflowRuns } from "../../db/schema";
import { getDb } from "../../lib/db";
import { log } from "../../lib/log";
import { enqueueAfterCall } from "./after-call";
import type { CallPorts } from "./ports";
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
 * The recording, the transcript and the agent's results onto the run (one write); the work after the call queued
 * (analysis, webhook nodes); the disposition to the campaign.
 */
export async function saveResults(env: Env, runId: number, r: CallResults, ports: Pick<CallPorts, "disposition">): Promise<void> {
  const transcript = r.turns.map((t) => ({
    role: t.role,
    text: t.text,
    start_ms: t.startMs,
    end_ms: t.endMs,
    interrupted: !!t.interrupted,
    ...(t.timing ? { timing: t.timing } : {}),
  }));
  const o = r.outcome;
  const agent = o && {
    gatheredContext: o.gathered,
    disposition: o.disposition,
    // Appended: the run may already say why its greeting fell back.
    ...(o.note ? { notes: appendNote(o.note) } : {}),
    usage: {
      stt_seconds: round2(o.usage.sttSeconds),
      tts_seconds: round2(o.usage.ttsSeconds),
      input_tokens: o.usage.inputTokens,
      output_tokens: o.usage.outputTokens,
    },
    ...(o.toolCalls?.length ? { toolCalls: o.toolCalls } : {}),
  };
  if (!r.recording && !transcript.length && !agent) return enqueueAfterCall(env, runId);
  try {
    await getDb(env)
      .update(workflowRuns)
      .set({ ...r.recording, ...(transcript.length ? { transcript } : {}), ...agent })
      .where(eq(workflowRuns.id, runId))
      .run();
  } catch (err) {
    log("error", "run_update_failed", { run_id: runId, error: String(err) });
  }
  // Analysis and webhook nodes read what was just written.
  await enqueueAfterCall(env, runId);
  if (!r.campaign || !o?.disposition) return;
  try {
    await ports.disposition(r.campaign, runId, o.disposition);
  } catch (err) {
    // The run keeps the disposition; only the campaign's count misses it.
    log("error", "campaign_disposition_failed", { run_id: runId, error: String(err) });
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;
