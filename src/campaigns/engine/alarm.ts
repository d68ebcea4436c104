// The object's one alarm: the due timers first (each isolated: one that throws is retried with backoff, then dropped),
// then dispatch, then zones given out ahead, then the summary and the alarm set again at the earliest timer.
import { MAX_CALL_SECONDS, TIMEOUT_GRACE_SECONDS } from "../../calls/campaign/call-length";
import { clock } from "../../lib/clock";
import { isOpen, type AttemptRow } from "./attempts";
import type { ContactRow } from "./contacts";
import type { CampaignCore } from "./core";
import type { Dispatch } from "./dispatch";
import type { AttemptEndings } from "./endings";
import type { StateMoves } from "./moves";
import type { TimerRow } from "./timers";
import { log } from "../../lib/log";

export class Alarm {
  constructor(
    private readonly core: CampaignCore,
    private readonly moves: StateMoves,
    private readonly endings: AttemptEndings,
    private readonly dispatch: Dispatch,
  ) {}

  async run(): Promise<void> {
    const { core } = this;
    core.timers.unarmed();
    if (!core.campaign()) return;
    const now = clock.now();
    for (const t of core.timers.due(now)) {
      try {
        await this.fire(t, now);
      } catch (err) {
        this.failed(t, err, now);
      }
    }
    await this.dispatch.safely();
    if (core.campaign()?.state === "running") core.hours.assignAhead();
    await core.settle();
  }

  /** One due timer's work. */
  async fire(t: TimerRow, now: number): Promise<void> {
    const { core } = this;
    // Taken off first: an alarm delivered twice finds nothing left to do.
    if (!core.timers.take(t)) return;
    switch (t.kind) {
      case "import":
        await core.imports.run();
        return;
      case "staged":
        core.staged.expire(now);
        if (this.moves.checkCompletion(now)) core.summary.force();
        return;
      case "summary":
        core.summary.timerGone();
        return; // the summary is written after the timers anyway
      case "dispatch":
        return; // dispatch runs after the timers anyway
      case "window":
        core.window.timerGone();
        core.window.refresh(now);
        return;
      case "retry":
      case "cap_wait": {
        // The delay (or the attempt cap's window) is over; the contact queues again (ahead of never-attempted ones) and waits for a window.
        const n = core.db.run`UPDATE contacts SET status = 'queued', queue_key = ${t.due} WHERE id = ${t.ref} AND status = 'waiting'`;
        if (n) core.markDirty();
        return;
      }
      case "timeout":
        return this.timedOut(t.ref, now);
      default:
        core.log.write("warning", "timer_unknown", `Dropped a timer of unknown kind '${t.kind}'`, { kind: t.kind, ref: t.ref });
    }
  }

  /** No final status came for the attempt in time: its outcome is `unknown`, and it is not retried. */
  private async timedOut(attemptId: number, now: number): Promise<void> {
    const { db, log } = this.core;
    const a = db.one<AttemptRow>`SELECT * FROM attempts WHERE id = ${attemptId}`;
    if (!a || !isOpen(a)) return;
    const done = await this.endings.finish(a, "unknown", now, { noRetry: true, error: "No final status before the call timeout" });
    if (!done) return;
    const ct = db.one<ContactRow>`SELECT phone_number FROM contacts WHERE id = ${a.contact_id}`;
    log.write(
      "warning",
      "call_timed_out",
      `No final status for ${ct?.phone_number ?? "a contact"} within ${MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS}s; outcome unknown, not retried`,
      { contact_id: a.contact_id, attempt: a.attempt, run_id: a.run_id },
    );
  }

  /** A timer that throws is retried with backoff, then dropped; it never blocks the rest of the alarm. */
  private failed(t: TimerRow, err: unknown, now: number): void {
    try {
      const { fails, dropped } = this.core.timers.failed(t, now);
      this.core.log.write("error", "timer_failed", `Timer ${t.kind}:${t.ref} failed${dropped ? " and was dropped" : "; retrying"}`, {
        kind: t.kind,
        ref: t.ref,
        fails,
        error: String(err),
      });
    } catch (inner) {
      log("error", "timer_failed", { kind: t.kind, ref: t.ref, error: String(err), inner: String(inner) });
    }
  }
}
