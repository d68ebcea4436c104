// The recipient's local hours: a call may start only while the local time lies within the organization's hours
// (default 08:00–21:00) in every zone the number may be in. A number whose zone is uncertain (a country with several
// zones and an area code that does not narrow it) is called only when it is a decent hour in all of them.
import type { LocalHoursConfig } from "../../telephony/calling-rules";
import type { ScheduleConfig } from "./settings";
import { Schedule } from "./schedule";

const WEEK_MS = 7 * 86_400_000;
const ROUNDS = 32;

/** The hours of one zone key (IANA names joined by `&`; "" = not judged, always open). */
export class ZoneHours {
  private readonly schedules: Schedule[];

  constructor(key: string, hours: LocalHoursConfig) {
    this.schedules =
      !hours.enabled || !key
        ? []
        : key.split("&").map((tz) => {
            const cfg: ScheduleConfig = {
              enabled: true,
              timezone: tz,
              slots: Array.from({ length: 7 }, (_, d) => ({ day_of_week: d, start_time: hours.start, end_time: hours.end })),
            };
            return new Schedule(cfg);
          });
  }

  get always(): boolean {
    return this.schedules.length === 0;
  }

  isOpen(ms: number): boolean {
    return this.schedules.every((s) => s.isOpen(ms));
  }

  /** `ms` when open, else the first instant every zone is within hours (null: not within a week). */
  nextOpening(ms: number): number | null {
    let t = ms;
    for (let i = 0; i < ROUNDS; i++) {
      let latest = t;
      for (const s of this.schedules) {
        const o = s.nextOpening(t);
        if (o === null) return null;
        if (o > latest) latest = o;
      }
      if (latest === t) return t;
      if (latest - ms > WEEK_MS) return null;
      t = latest;
    }
    return null;
  }

  /** When open: the first instant one of the zones leaves its hours. */
  nextClosing(ms: number): number | null {
    let soonest: number | null = null;
    for (const s of this.schedules) {
      const c = s.nextClosing(ms);
      if (c !== null && (soonest === null || c < soonest)) soonest = c;
    }
    return soonest;
  }

  /** Whether calls may start at `ms`, and the next instant that changes (null: never, or not within a week). */
  at(ms: number): { open: boolean; change: number | null } {
    if (this.always) return { open: true, change: null };
    const open = this.isOpen(ms);
    return { open, change: open ? this.nextClosing(ms) : this.nextOpening(ms) };
  }
}
