// The calling window as the running campaign sees it: whether calls may start now, when that changes next (a
// timer), and the log lines at each opening and closing. Answers are cached until the next change.
import { clock } from "../../lib/clock";
import type { DoSql } from "../../lib/do-sql";
import type { ScheduleConfig } from "./settings";
import type { CampaignLog } from "./logs";
import { Schedule } from "./schedule";
import type { CampaignRow } from "./campaign-row";
import type { Timers } from "./timers";
import { isFinished } from "./transitions";
import { iso } from "../../lib/helpers";

export class CallingWindow {
  private schedules: { json: string; schedule: Schedule } | null = null;
  /** The answer for [from, until). */
  private cached: { from: number; until: number; open: boolean; change: number | null } | null = null;
  /** Where the window timer is set (null: none; undefined: not known, so the next refresh writes it). */
  private timerAt: number | null | undefined = undefined;

  constructor(
    private readonly db: DoSql,
    private readonly timers: Timers,
    private readonly log: CampaignLog,
    /** The campaign row as it is now. */
    private readonly campaign: () => CampaignRow,
    private readonly configOf: (c: CampaignRow) => ScheduleConfig | null,
  ) {}

  /** The campaign's schedule, rebuilt only when its settings change. */
  schedule(c: CampaignRow): Schedule {
    if (this.schedules?.json !== c.settings) this.schedules = { json: c.settings, schedule: new Schedule(this.configOf(c)) };
    return this.schedules.schedule;
  }

  /** Whether calls may start at `now`, and when that changes (cached until then). */
  at(now: number): { open: boolean; change: number | null } {
    const w = this.cached;
    if (w && w.from <= now && now < w.until) return w;
    const sched = this.schedule(this.campaign());
    const open = sched.isOpen(now);
    const change = sched.always ? null : sched.nextChange(now);
    this.cached = { from: now, until: change ?? Number.MAX_SAFE_INTEGER, open, change };
    return this.cached;
  }

  /** Logs openings and closings, keeps the window timer at the next change; returns whether it is open. */
  refresh(now: number): boolean {
    const c = this.campaign();
    if (c.state !== "running") return false;
    const { open, change } = this.at(now);
    const was = c.window_open;
    if (was === null ? !open : (was === 1) !== open) {
      if (open) this.log.write("info", "window_opened", "Calling window opened", {});
      else {
        const next = this.schedule(c).nextOpening(now);
        this.log.write("info", "window_closed", next ? `Outside the calling schedule; no call starts until ${iso(next)}` : "Outside the calling schedule", {
          next_window_at: next ? iso(next) : null,
        });
      }
    }
    if (was !== (open ? 1 : 0)) this.db.run`UPDATE campaign SET window_open = ${open ? 1 : 0}`;
    if (this.timerAt !== change) {
      if (change == null) this.timers.clear("window");
      else this.timers.set("window", 0, change);
      this.timerAt = change;
    }
    return open;
  }

  /** When calls may start next, while the window is closed and the campaign not finished (else null). */
  nextOpening(c: CampaignRow): string | null {
    if (isFinished(c.state)) return null;
    const sched = this.schedule(c);
    if (sched.always) return null;
    const now = clock.now();
    if (sched.isOpen(now)) return null;
    const next = sched.nextOpening(now);
    return next ? iso(next) : null;
  }

  /** The settings changed: the schedule may have. */
  settingsChanged(): void {
    this.cached = null;
  }

  /** The window timer is gone (it fired, or was cleared with the running timers). */
  timerGone(): void {
    this.timerAt = undefined;
  }

  /** The campaign (re)enters `running`: the window is looked at afresh. */
  restart(): void {
    this.cached = null;
    this.timerAt = undefined;
  }

  /** Storage was wiped. */
  forget(): void {
    this.schedules = this.cached = null;
    this.timerAt = undefined;
  }
}
