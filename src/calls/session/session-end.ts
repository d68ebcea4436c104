// A call's end, carried out: the facade (call-session.ts) decides when and makes sure it runs once; this is the one
// ordered sequence every end goes through, whatever its reason, so no reason skips the hang-up, the run or the results.
import type { EndReason, VoiceAgent } from "../../agent/voice-agent";
import type { DoSql } from "../../lib/do-sql";
import { log } from "../../lib/log";
import type { MediaLoop } from "./media-loop";
import type { MediaSockets } from "./media-sockets";
import { endNote, saveResults } from "./outcome";
import type { CallPorts } from "./ports";
import type { CallRecording } from "./recording";
import type { SessionRelease } from "./release";
import { callFacts, callSeconds, recordEndFacts, sessionFinishesRun } from "./run-final";
import { readTurns } from "./session-schema";
import type { SessionStore } from "./store";
import type { TransferDesk } from "./transfer-desk";
import { wallBounds } from "./wall-limits";

/** What the end reaches: the session's parts, and the live media (null after a restart that never got it back). */
export type EndingSession = {
  env: Env;
  calls: CallPorts;
  db: DoSql;
  store: SessionStore;
  recording: CallRecording;
  desk: TransferDesk;
  sockets: MediaSockets;
  storage: DurableObjectStorage;
  release: SessionRelease;
  live: { loop: MediaLoop; agent: VoiceAgent } | null;
};

/** Tells the agent, records why, hangs up unless the callee did, makes the run final (run-final.ts), saves the results. */
export async function endSession(session: EndingSession, reason: EndReason, detail: string | null): Promise<void> {
  const { env, calls, db, store, recording, live } = session;
  const s = store.current;
  if (s.ended) return;
  const runId = s.runId ?? 0;
  const note = endNote(reason, { ...wallBounds(s), detail });
  store.set({ ended: true, endReason: reason, endNote: note, ...(live ? { clockMs: live.loop.clockMs } : {}) });
  try {
    await live?.agent.onEnd(reason);
  } catch (err) {
    log("error", "agent_error", { run_id: runId, error: String(err) });
  }
  await recordEndFacts(env, runId, reason, note, callFacts(live?.loop, readTurns(db)));
  await session.desk.giveUp("failed", "The call ended before the person answered");
  // Transferred: the carrier carries the caller on to the person; hanging up would cut them off.
  if (reason !== "callee_hangup" && reason !== "transferred") {
    try {
      await calls.hangup(s.orgId, runId);
    } catch (err) {
      // The run watchdog ends a call the carrier would not hang up; the socket closes below either way.
      log("error", "hangup_failed", { run_id: runId, reason, error: String(err) });
    }
  }
  if (sessionFinishesRun(reason)) {
    try {
      await calls.finish(runId, callSeconds(store.current.clockMs, s.startedWall, Date.now()));
    } catch (err) {
      log("error", "run_finish_failed", { run_id: runId, error: String(err) });
    }
  }
  // After the hang-up (the callee is not kept waiting on the upload), before the socket closes.
  let stored: Awaited<ReturnType<CallRecording["finish"]>> = null;
  try {
    // A session that restarted and never got its media back still has the recording's begun part in storage.
    const recorder = live ? live.loop.recorder : recording.leftover();
    if (recorder) stored = await recording.finish(recorder);
  } catch (err) {
    log("error", "recording_failed", { run_id: runId, error: String(err) });
  }
  await saveResults(env, runId, { recording: stored, turns: readTurns(db), outcome: live?.agent.outcome?.(), campaign: s.campaign }, calls);
  for (const ws of session.sockets.current()) {
    try {
      ws.close(1000, reason);
    } catch {
      // already closed by the far end
    }
  }
  await session.storage.deleteAlarm();
  log("info", "call_session_ended", { run_id: runId, reason });
  await session.release.later();
}
