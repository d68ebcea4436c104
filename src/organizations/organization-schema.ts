// The organization object's SQLite schema, versioned (src/lib/do-sql.ts migrate): never edit a shipped version, add one.
import type { Migration } from "../lib/do-sql";

/** One slot of the concurrent-call cap, until it is released or expires. */
export type LeaseRow = { lease_id: string; expires_at: number };
/** A campaign refused a slot, woken when one frees. */
export type WaiterRow = { campaign_id: number; since: number };
/** A number the organization never calls (its do-not-call list), E.164 or as dialed. */
export type SuppressionRow = { number: string; reason: string | null; source: string; created_at: string };
/** One dial (its lease) to a number, for the cap on attempts per number across campaigns. */
export type DialRow = { lease_id: string; number: string; at: number };
/** A per-organization rate-limit override (rate-limits.ts). */
export type RateLimitOverrideRow = { name: string; rate: number; burst: number };

export const ORGANIZATION_MIGRATIONS: readonly Migration[] = [
  // v1: the tables as the object created them before it kept a version, so objects from then adopt it unchanged.
  [
    `CREATE TABLE IF NOT EXISTS leases (lease_id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS waiters (campaign_id INTEGER PRIMARY KEY, since INTEGER NOT NULL)`,
    // k = 'cap': the organization's own concurrent-call cap.
    `CREATE TABLE IF NOT EXISTS settings (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS rate_limit_overrides (name TEXT PRIMARY KEY, rate REAL NOT NULL, burst INTEGER NOT NULL)`,
  ],
  // v2: the calling rules kept where every dial already asks: the suppression list and the dials per number.
  [
    `CREATE TABLE suppressions (number TEXT PRIMARY KEY, reason TEXT, source TEXT NOT NULL, created_at TEXT NOT NULL)`,
    `CREATE TABLE dials (lease_id TEXT PRIMARY KEY, number TEXT NOT NULL, at INTEGER NOT NULL)`,
    `CREATE INDEX dials_number ON dials (number, at)`,
    `CREATE INDEX dials_at ON dials (at)`,
  ],
];
