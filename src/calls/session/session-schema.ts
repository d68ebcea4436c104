// The call session's SQLite schema, versioned (src/lib/do-sql.ts migrate): never edit a shipped version, add one.
import type { Turn, TurnTiming } from "../../agent/voice-agent";
import type { DoSql, Migration } from "../../lib/do-sql";

export type TurnRow = { id: number; role: string; text: string; start_ms: number; end_ms: number; interrupted: number; timing: string | null };

export const CALL_SESSION_MIGRATIONS: readonly Migration[] = [
  [
    // kv: the session's record, one row per field (store.ts)
    `CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
    `CREATE TABLE turns (id INTEGER PRIMARY KEY, role TEXT NOT NULL, text TEXT NOT NULL, start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL, interrupted INTEGER NOT NULL DEFAULT 0)`,
  ],
  [
    // The part of the recording being filled, kept by the heartbeat so a restarted session records on from it.
    `CREATE TABLE recording (id INTEGER PRIMARY KEY, bytes BLOB NOT NULL)`,
  ],
  [
    // An agent turn's timing (JSON, see TurnTiming), or null.
    `ALTER TABLE turns ADD COLUMN timing TEXT`,
  ],
];

/** One turn of the transcript, as the agent logged it. */
export function insertTurn(db: DoSql, t: Turn): void {
  db.run`INSERT INTO turns (role, text, start_ms, end_ms, interrupted, timing) VALUES (${t.role}, ${t.text}, ${Math.round(t.startMs)}, ${Math.round(t.endMs)}, ${t.interrupted ? 1 : 0}, ${t.timing ? JSON.stringify(t.timing) : null})`;
}

/** The transcript so far, in order. */
export function readTurns(db: DoSql): Turn[] {
  return db.all<TurnRow>`SELECT * FROM turns ORDER BY id`.map((t) => ({
    role: t.role as Turn["role"],
    text: t.text,
    startMs: t.start_ms,
    endMs: t.end_ms,
    ...(t.interrupted ? { interrupted: true } : {}),
    ...(t.timing ? { timing: JSON.parse(t.timing) as TurnTiming } : {}),
  }));
}
