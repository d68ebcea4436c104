// The call session's SQLite schema, versioned (src/lib/do-sql.ts migrate): never edit a shipped version, add one.
import type { Migration } from "../../lib/do-sql";

export type TurnRow = { id: number; role: string; text: string; start_ms: number; end_ms: number; interrupted: number };

export const CALL_SESSION_MIGRATIONS: readonly Migration[] = [
  [
    // run_id, org_id, provider, agent, greeting, variables, silence_ms, stream_id, started_at, ended, end_reason
    `CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
    `CREATE TABLE turns (id INTEGER PRIMARY KEY, role TEXT NOT NULL, text TEXT NOT NULL, start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL, interrupted INTEGER NOT NULL DEFAULT 0)`,
  ],
];
