// A finished call keeps nothing in its session: once its results and recording are stored (the session's end) and
// its run is final, the session deletes its own storage (record, transcript, recording part, alarm). The first look is
// the alarm 5 s after the end (the carrier's final status is usually a moment behind); a run not yet final (a
// transferred call's stays open while the person talks) is asked again at 30 s, doubling to 10 minutes. Nothing
// brings the session back: the stream, resume and web-call routes refuse a final run before reaching it, and an
// emptied session has no run to act on.
import { log } from "../../lib/log";
import type { CallPorts } from "./ports";

/** The first look, a moment after the end: the carrier's final status and the run's readers come within it. */
export const RELEASE_AFTER_MS = 5_000;
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_MS = 600_000;

export class SessionRelease {
  /** The storage is deleted: nothing is read or written any more. */
  gone = false;
  private tries = 0;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly ports: () => Pick<CallPorts, "runFinal">,
  ) {}

  /** The call ended: the first look is the alarm's, a moment later. */
  async later(): Promise<void> {
    await this.storage.setAlarm(Date.now() + RELEASE_AFTER_MS);
  }

  /** Deletes the storage when the run is final, else sets the alarm to ask again. */
  async run(runId: number | null): Promise<void> {
    if (this.gone) return;
    let final = runId === null;
    try {
      final ||= await this.ports().runFinal(runId ?? 0);
    } catch (err) {
      log("error", "session_release_failed", { run_id: runId, error: String(err) });
    }
    if (!final) {
      await this.storage.setAlarm(Date.now() + Math.min(FIRST_RETRY_MS * 2 ** this.tries++, MAX_RETRY_MS));
      return;
    }
    this.gone = true;
    await this.storage.deleteAlarm();
    await this.storage.deleteAll();
  }
}
