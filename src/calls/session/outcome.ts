// What a call session leaves on its run when the call ends: why it ended (at once, before anything slow), then the
// recording, transcript and the agent's results in one write, the campaign's disposition; and, where the carrier
// will not report the end itself (the media was lost while the service restarted), the run's final status.
import { eq, sql } from "drizzle-orm";
import { workflowRuns } from "../../db/schema";
import { getDb } from "../../lib/db";
import { log } from "../../lib/log";
import { getRun } from "../runs";
import { applyStatus } from "../status";
import type { CampaignAttempt } from "./store";
import type { AgentOutcome, EndReason, Turn } from "../../agent/voice-agent";

/** The run's note for an end the transcript does not explain by itself. */
export function endNote(reason: EndReason, o: { silenceMs: number; maxMs: number; detail?: string | null }): string | null {
  const detail = o.detail ? `: ${o.detail}` : "";
  switch (reason) {
    case "callee_silent":
      return `The callee said nothing for ${Math.round(o.silenceMs / 1000)} s; the call was ended`;
    case "max_call_seconds":
      return `The call reached its maximum length of ${Math.round(o.maxMs / 1000)} s and was ended`;
    case "media_error":
      return `The call's media stream failed${detail}; the call was ended`;
    case "media_lost":
      return `The call's media connection was lost${detail} and did not come back; the call was hung up`;
    default:
      return o.detail ?? null;
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

/** The recording, the transcript and the agent's results onto the run (one write); the disposition to the campaign. */
export async function saveResults(env: Env, runId: number, r: CallResults): Promise<void> {
  const transcript = r.turns.map((t) => ({ role: t.role, text: t.text, start_ms: t.startMs, end_ms: t.endMs, interrupted: !!t.interrupted }));
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
  };
  if (!r.recording && !transcript.length && !agent) return;
  try {
    await getDb(env)
      .update(workflowRuns)
      .set({ ...r.recording, ...(transcript.length ? { transcript } : {}), ...agent })
      .where(eq(workflowRuns.id, runId))
      .run();
  } catch (err) {
    log("error", "run_update_failed", { run_id: runId, error: String(err) });
  }
  if (!r.campaign || !o?.disposition) return;
  const { campaignId, contactId, attempt } = r.campaign;
  try {
    await env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(campaignId))).onRunOutcome({ runId, contactId, attempt, disposition: o.disposition });
  } catch (err) {
    // The run keeps the disposition; only the campaign's count misses it.
    log("error", "campaign_disposition_failed", { run_id: runId, error: String(err) });
  }
}

/**
 * The run made final by the session itself: its media was lost and the carrier's own report of the end may never
 * come (it was sent while the service was down). A later report of the carrier's is a repeat and changes nothing;
 * the campaign's slot and the organization's lease are given back now.
 */
export async function finishRun(env: Env, runId: number, durationSeconds: number | null): Promise<void> {
  try {
    const run = await getRun(getDb(env), runId);
    if (run) await applyStatus(env, run, { status: "completed", durationSeconds });
  } catch (err) {
    log("error", "run_finish_failed", { run_id: runId, error: String(err) });
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;
