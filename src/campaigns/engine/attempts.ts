// The attempts table: one row per dial of a contact. An attempt is stored `dialing` before the carrier is asked
// (exactly-once dialing), becomes `in_flight` when the carrier takes the call, and ends with a final call status.
import { sql, type DoSql } from "../../lib/do-sql";

/** Part of migration v1 (shipped: never edited). */
export const ATTEMPTS_TABLE = [
  // status: dialing (recorded before the carrier is asked) | in_flight | a final call status
  `CREATE TABLE attempts (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      contact_id INTEGER NOT NULL,
      attempt INTEGER NOT NULL,
      status TEXT NOT NULL,
      last_status TEXT,
      run_id INTEGER,
      provider_call_id TEXT,
      lease_id TEXT,
      dialed_at INTEGER NOT NULL,
      ended_at INTEGER,
      failure INTEGER NOT NULL DEFAULT 0,
      error TEXT,
      UNIQUE (contact_id, attempt)
    )`,
  `CREATE INDEX attempts_status ON attempts (status)`,
  `CREATE INDEX attempts_ended ON attempts (ended_at)`,
  `CREATE INDEX attempts_dialed ON attempts (dialed_at)`,
];

export type AttemptRow = {
  id: number;
  contact_id: number;
  attempt: number;
  status: string;
  last_status: string | null;
  run_id: number | null;
  provider_call_id: string | null;
  lease_id: string | null;
  dialed_at: number;
  ended_at: number | null;
  failure: number;
  error: string | null;
  /** Since migration v6 (conversations.ts): 1 a conversation, 0 answered with none, null not known. */
  conversation?: number | null;
};

/** An attempt a final status can still close (OPEN_ATTEMPT in SQL). */
export const isOpen = (a: AttemptRow) => a.status === "dialing" || a.status === "in_flight";
export const OPEN_ATTEMPT = sql`status IN ('dialing', 'in_flight')`;

/** Attempts dialing or in flight. */
export function openAttempts(db: DoSql): number {
  return db.value<number>`SELECT count(*) FROM attempts WHERE ${OPEN_ATTEMPT}` ?? 0;
}

export const attemptKey = (contactId: number, attempt: number) => `${contactId}:${attempt}`;

/** The attempts these (contact, attempt) pairs name, by attemptKey (one statement). */
export function attemptsOf(db: DoSql, pairs: { contactId: number; attempt: number }[]): Map<string, AttemptRow> {
  const json = JSON.stringify(pairs.map((s) => [s.contactId, s.attempt]));
  const out = new Map<string, AttemptRow>();
  // The list drives the join (CROSS JOIN keeps that order), so each pair is one lookup in the (contact_id, attempt) index.
  for (const a of db.all<AttemptRow>`SELECT a.* FROM json_each(${json}) AS j CROSS JOIN attempts AS a
    ON a.contact_id = j.value ->> 0 AND a.attempt = j.value ->> 1`)
    out.set(attemptKey(a.contact_id, a.attempt), a);
  return out;
}
