// The campaign's log: what happened and why, newest first for the API (the snapshot's 100, and pages of `logs`).
import { clock } from "../../lib/clock";
import type { DoSql } from "../../lib/do-sql";
import type { LogEntry, LogLevel, LogPage } from "./types";
import { iso } from "../../lib/helpers";

/** Part of migration v1 (shipped: never edited). */
export const LOGS_TABLE = [
  `CREATE TABLE logs (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      ts TEXT NOT NULL,
      level TEXT NOT NULL,
      event TEXT NOT NULL,
      message TEXT NOT NULL,
      details TEXT NOT NULL
    )`,
];

export type LogRow = { id: number; ts: string; level: string; event: string; message: string; details: string };

function toEntry(r: Omit<LogRow, "id">): LogEntry {
  return { ts: r.ts, level: r.level as LogLevel, event: r.event, message: r.message, details: JSON.parse(r.details) };
}

export class CampaignLog {
  constructor(private readonly db: DoSql) {}

  /** Appends one entry, stamped with the clock; part of the caller's transaction when there is one. */
  write(level: LogLevel, event: string, message: string, details: Record<string, unknown>): void {
    this.db.run`INSERT INTO logs (ts, level, event, message, details) VALUES (${iso(clock.now())}, ${level}, ${event}, ${message}, ${JSON.stringify(details)})`;
  }

  /** The newest `n` entries, newest first. */
  newest(n: number): LogEntry[] {
    return this.db.all<Omit<LogRow, "id">>`SELECT ts, level, event, message, details FROM logs ORDER BY id DESC LIMIT ${n}`.map(toEntry);
  }

  /** `limit` entries newest first, continuing below log id `before`. */
  page(limit: number, before: number | null): LogPage {
    const rows = this.db.all<LogRow>`SELECT * FROM logs WHERE (${before} IS NULL OR id < ${before}) ORDER BY id DESC LIMIT ${limit + 1}`;
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return { items: page.map((r) => ({ id: r.id, ...toEntry(r) })), next_before: more ? page[page.length - 1].id : null };
  }
}
