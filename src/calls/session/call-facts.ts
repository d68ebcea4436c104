// What a run says actually happened on its call (issue 39: calls were reported as conversations when they were
// not), written with why it ended: the audio each way, the pauses in the callee's stream and the agent's, whether a
// conversation took place, and a duration that is the recording's length. docs/live-calls.md ("What a run says
// happened") documents the fields.
//
// Duration: the call's audio clock at its end (one frame of the callee's audio = 20 ms, a reconnect's unheard time
// added as silence), which is exactly what the recorder wrote, so `duration_seconds` agrees with the recording. The
// wall clock would count time the session never heard (a busy machine's backlog, a carrier's late frames).
import { sql, eq } from "drizzle-orm";
import { workflowRuns } from "../../db/schema";
import { FRAME_MS } from "../../lib/audio/framer";
import { getDb } from "../../lib/db";
import { log } from "../../lib/log";
import type { EndReason } from "../../agent/voice-agent";
import type { MediaLoop } from "./media-loop";

export type MediaFacts = { caller_audio_s: number; agent_audio_s: number; gaps: number; underruns: number };
export type CallFacts = { media: MediaFacts | null; conversation: boolean };

const seconds = (frames: number) => Math.round((frames * FRAME_MS) / 100) / 10;

/**
 * The call's facts from its media loop (null: no media on this session's connection) and transcript. A conversation:
 * at least one of the callee's turns transcribed to words (a key press counts: the callee answered the agent).
 */
export function callFacts(loop: Pick<MediaLoop, "carried" | "pacer"> | null | undefined, turns: ReadonlyArray<{ role: string; text: string }>): CallFacts {
  const conversation = turns.some((t) => t.role === "callee" && t.text.trim() !== "");
  if (!loop) return { media: null, conversation };
  const c = loop.carried;
  return {
    media: { caller_audio_s: seconds(c.callerFrames), agent_audio_s: seconds(c.agentFrames), gaps: c.gaps, underruns: loop.pacer.underruns },
    conversation,
  };
}

/**
 * The run's duration in whole seconds: the audio clock where the media began (the recording's length), else the
 * session's wall clock from the media's start (null: it never started).
 */
export function callSeconds(clockMs: number | null, startedWall: number | null | undefined, now: number): number | null {
  if (clockMs !== null && clockMs > 0) return Math.round(clockMs / 1000);
  return startedWall ? Math.max(0, Math.round((now - startedWall) / 1000)) : null;
}

const appendNote = (note: string) => sql`coalesce(${workflowRuns.notes} || '; ', '') || ${note}`;

/** Why the call ended and what it carried, on the run at once in one write (the carrier's final status may follow). */
export async function recordEndFacts(env: Env, runId: number, reason: EndReason, note: string | null, facts: CallFacts): Promise<void> {
  try {
    await getDb(env)
      .update(workflowRuns)
      .set({ endReason: reason, ...(note ? { notes: appendNote(note) } : {}), media: facts.media, conversation: facts.conversation })
      .where(eq(workflowRuns.id, runId))
      .run();
  } catch (err) {
    log("error", "run_update_failed", { run_id: runId, error: String(err) });
  }
}
