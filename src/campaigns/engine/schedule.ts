// Calling windows: weekly slots in an IANA timezone, start inclusive, end exclusive, `24:00` allowed as
// an end, 0 = Monday. All math goes through Intl, so DST gaps and overlaps come out right: a window opens at the
// first instant whose local wall time lies inside a slot, wherever the clocks jump.
import type { ScheduleConfig } from "./settings";

const MINUTE = 60_000;
const DAY = 86_400_000;

type Slot = { dow: number; start: number; end: number }; // minutes of the local day

export type LocalTime = { y: number; m: number; d: number; dow: number; minutes: number };

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(tz, f);
  }
  return f;
}

function wallClock(ms: number, tz: string): { y: number; m: number; d: number; hh: number; mm: number; ss: number } {
  const out = { y: 0, m: 0, d: 0, hh: 0, mm: 0, ss: 0 };
  for (const p of formatter(tz).formatToParts(ms)) {
    if (p.type === "year") out.y = Number(p.value);
    else if (p.type === "month") out.m = Number(p.value);
    else if (p.type === "day") out.d = Number(p.value);
    else if (p.type === "hour") out.hh = Number(p.value) % 24;
    else if (p.type === "minute") out.mm = Number(p.value);
    else if (p.type === "second") out.ss = Number(p.value);
  }
  return out;
}

/** Local time minus UTC at instant `ms`, in ms (e.g. -4 h for New York in summer). */
export function offsetAt(ms: number, tz: string): number {
  const w = wallClock(ms, tz);
  return Date.UTC(w.y, w.m - 1, w.d, w.hh, w.mm, w.ss) - Math.floor(ms / 1000) * 1000;
}

export function localTime(ms: number, tz: string): LocalTime {
  const w = wallClock(ms, tz);
  const dow = (new Date(Date.UTC(w.y, w.m - 1, w.d)).getUTCDay() + 6) % 7;
  return { y: w.y, m: w.m, d: w.d, dow, minutes: w.hh * 60 + w.mm };
}

/** The first instant (second precision) in (lo, hi] whose offset differs from the offset at lo. */
function transitionBetween(lo: number, hi: number, tz: string): number {
  const base = offsetAt(lo, tz);
  let a = Math.floor(lo / 1000);
  let b = Math.ceil(hi / 1000);
  while (b - a > 1) {
    const mid = Math.floor((a + b) / 2);
    if (offsetAt(mid * 1000, tz) === base) a = mid;
    else b = mid;
  }
  return b * 1000;
}

/**
 * Every instant a local wall time (date + minutes, 1440 = the next midnight) is reached in `tz`: two when the clocks
 * fall back over it, the moment the clocks jump when it is skipped, else one.
 */
export function zonedInstants(y: number, m: number, d: number, minutes: number, tz: string): number[] {
  const naive = Date.UTC(y, m - 1, d) + minutes * MINUTE;
  const offsets = [...new Set([offsetAt(naive - DAY, tz), offsetAt(naive + DAY, tz)])];
  const valid = offsets.map((o) => naive - o).filter((u) => offsetAt(u, tz) === naive - u);
  if (valid.length) return valid.sort((a, b) => a - b);
  // In a gap: the wall time is skipped, so it is first "reached" at the jump.
  const candidates = offsets.map((o) => naive - o);
  return [transitionBetween(Math.min(...candidates), Math.max(...candidates), tz)];
}

/** The first instant a local wall time is reached (see zonedInstants). */
export function zonedInstant(y: number, m: number, d: number, minutes: number, tz: string): number {
  return zonedInstants(y, m, d, minutes, tz)[0];
}

function parseMinutes(hhmm: string): number {
  const [h, m] = hhmm.split(":").map(Number);
  return h * 60 + m;
}

/** A schedule ready for repeated questions. `null` or disabled means "always open". */
export class Schedule {
  private readonly slots: Slot[];
  readonly tz: string;
  readonly always: boolean;

  constructor(cfg: ScheduleConfig | null | undefined) {
    this.always = !cfg || cfg.enabled === false || !cfg.slots?.length;
    this.tz = cfg?.timezone ?? "UTC";
    this.slots = (cfg?.slots ?? []).map((s) => ({ dow: s.day_of_week, start: parseMinutes(s.start_time), end: parseMinutes(s.end_time) }));
  }

  isOpen(ms: number): boolean {
    if (this.always) return true;
    const t = localTime(ms, this.tz);
    return this.slots.some((s) => s.dow === t.dow && s.start <= t.minutes && t.minutes < s.end);
  }

  /** Slot boundaries (starts or ends) as instants, for local days -1 … +8 around `ms`, plus DST jumps. */
  private candidates(ms: number, edge: "start" | "end"): number[] {
    const t = localTime(ms, this.tz);
    const out: number[] = [];
    for (let k = -1; k <= 8; k++) {
      const day = new Date(Date.UTC(t.y, t.m - 1, t.d + k));
      const dow = (day.getUTCDay() + 6) % 7;
      for (const s of this.slots) {
        if (s.dow !== dow) continue;
        out.push(...zonedInstants(day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate(), edge === "start" ? s.start : s.end, this.tz));
      }
    }
    // A jump can open or close a window by itself (e.g. the repeated hour when clocks fall back).
    for (let k = 0; k <= 9; k++) {
      const a = ms + k * DAY;
      if (offsetAt(a, this.tz) !== offsetAt(a + DAY, this.tz)) out.push(transitionBetween(a, a + DAY, this.tz));
    }
    return out.sort((a, b) => a - b);
  }

  /** `ms` itself when open, else the next instant a window opens (null: never within the next week). */
  nextOpening(ms: number): number | null {
    if (this.isOpen(ms)) return ms;
    for (const c of this.candidates(ms, "start")) if (c > ms && this.isOpen(c)) return c;
    return null;
  }

  /** When open: the next instant the window closes (null: it never closes). When closed: null. */
  nextClosing(ms: number): number | null {
    if (this.always || !this.isOpen(ms)) return null;
    for (const c of this.candidates(ms, "end")) if (c > ms && !this.isOpen(c)) return c;
    return null;
  }

  /** The next instant at which isOpen changes (null: never). */
  nextChange(ms: number): number | null {
    return this.isOpen(ms) ? this.nextClosing(ms) : this.nextOpening(ms);
  }
}
