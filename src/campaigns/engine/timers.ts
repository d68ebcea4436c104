// The object's timers: one table of (kind, ref, due) and one alarm pointed at the earliest. Each kind has at most
// one timer per ref; a timer that keeps failing is retried with backoff and then dropped.
import type { DoSql } from "../../lib/do-sql";

/** Part of migration v1 (shipped: never edited). */
export const TIMERS_TABLE = [
  // One alarm serves them all: the earliest `due` is the alarm time.
  `CREATE TABLE timers (
      kind TEXT NOT NULL,
      ref INTEGER NOT NULL,
      due INTEGER NOT NULL,
      fails INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (kind, ref)
    )`,
  `CREATE INDEX timers_due ON timers (due)`,
];

/** `cap_wait`: a contact waits for the organization's attempt cap (kept apart from `retry` so progress can say so). */
export type TimerKind = "window" | "retry" | "cap_wait" | "timeout" | "dispatch" | "summary" | "import" | "staged";
export type TimerRow = { kind: TimerKind; ref: number; due: number; fails: number };

/** Failures after which a timer is dropped rather than retried. */
export const TIMER_MAX_FAILS = 5;
/** Due timers handled per alarm at most (the next alarm, due at once, takes the rest). */
const DUE_BATCH = 1000;

export class Timers {
  /** What the alarm is set to (null: none), so an unchanged earliest timer costs no storage call. */
  private armedAt: number | null = null;

  constructor(
    private readonly db: DoSql,
    private readonly storage: DurableObjectStorage,
  ) {}

  /** Sets the timer to `due`, earlier or later than before. */
  set(kind: TimerKind, ref: number, due: number): void {
    this.db.run`INSERT INTO timers (kind, ref, due) VALUES (${kind}, ${ref}, ${due}) ON CONFLICT (kind, ref) DO UPDATE SET due = excluded.due, fails = 0`;
  }

  /** set() for several refs of one kind, in one statement. */
  setMany(kind: TimerKind, refs: number[], due: number): void {
    if (!refs.length) return;
    this.db.run`INSERT INTO timers (kind, ref, due) SELECT ${kind}, value, ${due} FROM json_each(${JSON.stringify(refs)}) WHERE true
      ON CONFLICT (kind, ref) DO UPDATE SET due = excluded.due, fails = 0`;
  }

  /** Sets the timer to `due` unless it is already due sooner. */
  atMost(kind: TimerKind, ref: number, due: number): void {
    this.db
      .run`INSERT INTO timers (kind, ref, due) VALUES (${kind}, ${ref}, ${due}) ON CONFLICT (kind, ref) DO UPDATE SET due = min(due, excluded.due), fails = 0`;
  }

  /** Removes one timer, or every timer of the kind when no ref is given. */
  clear(kind: TimerKind, ref?: number): void {
    if (ref === undefined) this.db.run`DELETE FROM timers WHERE kind = ${kind}`;
    else this.db.run`DELETE FROM timers WHERE kind = ${kind} AND ref = ${ref}`;
  }

  /** Timers due at `now`, earliest first. */
  due(now: number): TimerRow[] {
    return this.db.all<TimerRow>`SELECT * FROM timers WHERE due <= ${now} ORDER BY due LIMIT ${DUE_BATCH}`;
  }

  /** Takes a due timer off before it runs; false when it is gone or was moved (an alarm delivered twice). */
  take(t: TimerRow): boolean {
    return this.db.run`DELETE FROM timers WHERE kind = ${t.kind} AND ref = ${t.ref} AND due = ${t.due}` > 0;
  }

  /** A timer that threw: due again after a backoff, or dropped after TIMER_MAX_FAILS. */
  failed(t: TimerRow, now: number): { fails: number; dropped: boolean } {
    const fails = t.fails + 1;
    const dropped = fails >= TIMER_MAX_FAILS;
    if (dropped) this.db.run`DELETE FROM timers WHERE kind = ${t.kind} AND ref = ${t.ref}`;
    else
      this.db.run`INSERT INTO timers (kind, ref, due, fails) VALUES (${t.kind}, ${t.ref}, ${now + 60_000 * fails}, ${fails})
        ON CONFLICT (kind, ref) DO UPDATE SET due = excluded.due, fails = excluded.fails`;
    return { fails, dropped };
  }

  /** The alarm is not set any more: it has just fired, or storage was wiped. */
  unarmed(): void {
    this.armedAt = null;
  }

  /** Points the alarm at the earliest timer (or removes it). */
  async rearm(): Promise<void> {
    const due = this.db.value<number>`SELECT min(due) FROM timers`;
    if (due === this.armedAt) return;
    if (due == null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(due);
    this.armedAt = due;
  }
}
