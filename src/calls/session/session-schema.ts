// The call session's SQLite schema, versioned (src/lib/do-sql.ts migrate): never edit a shipped version, add one.
import type { Migration } from "../../lib/do-sql";

export type TurnRow = { id: number; role: string; text: string; start_ms: number; end_ms: number; interrupted: number };

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
];
