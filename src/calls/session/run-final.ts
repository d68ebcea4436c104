// When the session makes its run final itself (issue 39: a run is final when the call is over, whoever noticed
// first), so that no slot waits on a carrier's report.
//
// Ending a call: the carrier's own final status usually follows within a moment, but Twilio sends it once and a lost
// one held the organization's lease (and the campaign's slot) until the hourly watchdog. So the session writes the
// run's final status (completed; voicemail where a machine answered, applyStatus decides) with a duration from its
// own clock, which frees the lease and tells the campaign through the same idempotent path a carrier's final status
// takes (src/calls/runs/status.ts: the engine lease is released there too); the carrier's later status changes nothing.
// A transferred call is the exception: the carrier carries the caller on to the person and the transfer ends the run.
//
// A call admitted whose media never connects: an inbound call is answered with a media document and holds the
// organization's lease from then on, but nothing else would end it before the watchdog if the carrier's stream never
// opens (a carrier failing, or a request forged with a leaked inbound URL of a carrier that signs nothing). The
// admission arms the run's session with a deadline; the session's alarm, if its media has not begun by then, hangs
// the call up through the carrier and makes the run final (`media_error`, a note saying why), which frees the lease.
// A session whose media began never looks at it: its heartbeat owns the alarm from then on.
import type { EndReason } from "../../agent/voice-agent";
import { log } from "../../lib/log";
import { recordEndFacts } from "./call-facts";
import type { CallPorts } from "./ports";

// What the run says of the call as it ends (its media, a conversation or not, its duration): call-facts.ts.
export { callFacts, callSeconds, recordEndFacts } from "./call-facts";

export const sessionFinishesRun = (reason: EndReason): boolean => reason !== "transferred";

/** Whole seconds the session saw the call (its wall clock from the media's start), or null when it never started. */
export const sessionSeconds = (startedWall: number | null | undefined, now: number): number | null =>
  startedWall ? Math.max(0, Math.round((now - startedWall) / 1000)) : null;

/** How long an admitted call's media may take to connect; carriers open it within a second or two of the answer. */
export const MEDIA_WAIT_MS = 10_000;

export type MediaWait = { orgId: number; runId: number; at: number };

const KEY = "media_wait";
const REASON: EndReason = "media_error";

export const noMediaNote = (ms: number) => `The call's media never connected within ${Math.round(ms / 1000)} s of the answer; the call was hung up`;

/** Arms the deadline (the session's own alarm; nothing else sets one before the media begins). */
export async function armMediaWait(storage: DurableObjectStorage, wait: MediaWait): Promise<void> {
  await storage.put(KEY, wait);
  await storage.setAlarm(wait.at);
}

/**
 * The alarm of a session whose media has not begun: past the deadline, the call is hung up and its run ended.
 * `claim` is asked first, with no I/O between it and the deadline's check: the media may have begun while the alarm
 * was on its way, and once claimed the session refuses media that comes while the hang-up's requests are out (it
 * would otherwise start a conversation whose storage this deletes under it).
 */
export async function mediaWaitAlarm(storage: DurableObjectStorage, env: Env, ports: CallPorts, now: number, claim: () => boolean): Promise<void> {
  const wait = await storage.get<MediaWait>(KEY);
  if (!wait) return;
  if (now < wait.at) return storage.setAlarm(wait.at);
  if (!claim()) return;
  try {
    await ports.hangup(wait.orgId, wait.runId);
  } catch (err) {
    // The run is still ended below: the slot comes back whatever the carrier says.
    log("error", "hangup_failed", { run_id: wait.runId, reason: "no_media", error: String(err) });
  }
  // Answered, and nobody heard: no conversation (a campaign counts it apart from one).
  await recordEndFacts(env, wait.runId, REASON, noMediaNote(MEDIA_WAIT_MS), { media: null, conversation: false });
  await ports.finish(wait.runId, 0);
  log("warning", "call_media_never_connected", { run_id: wait.runId, wait_ms: MEDIA_WAIT_MS });
  // Nothing of the call is here (no media, no transcript): the session keeps nothing.
  await storage.deleteAll();
}
