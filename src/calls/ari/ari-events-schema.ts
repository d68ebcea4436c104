// The ARI events object's SQLite schema, versioned (src/lib/do-sql.ts migrate): never edit a shipped version, add one.
import type { Migration } from "../../lib/do-sql";

/** A run whose channel events this object watches (an originated call, or one that came in). */
export type CallRow = { run_id: number; answered: number; hung_up_by_us: number; dial_status: string | null; tracked_at: number };

export const ARI_EVENTS_MIGRATIONS: readonly Migration[] = [
  // v1: the tables as the object created them before it kept a version, so objects from then adopt it unchanged.
  [
    `CREATE TABLE IF NOT EXISTS calls (run_id INTEGER PRIMARY KEY, answered INTEGER NOT NULL DEFAULT 0, hung_up_by_us INTEGER NOT NULL DEFAULT 0, dial_status TEXT, tracked_at INTEGER NOT NULL)`,
    // config_id, failures, last_error
    `CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
  ],
  // v2: calls that came in carry Asterisk's own channel id, which names no run: the channel → run map.
  [`CREATE TABLE IF NOT EXISTS inbound (channel_id TEXT PRIMARY KEY, run_id INTEGER NOT NULL)`],
];
