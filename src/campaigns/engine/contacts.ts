// The contact list (its table and row): adding validated contacts (one phone number once), and reading back finished
// ones for a redial.
import type { DoSql } from "../../lib/do-sql";
import type { ContactInput } from "./object-api";
import type { PackedContacts } from "./packed";

/** Part of migration v1 (shipped: never edited). */
export const CONTACTS_TABLE = [
  // status: queued (ready to dial) | waiting (retry timer) | active (an attempt is open) | done | skipped (cancelled)
  `CREATE TABLE contacts (
      id INTEGER PRIMARY KEY,
      row INTEGER NOT NULL,
      phone_number TEXT NOT NULL UNIQUE,
      initial_context TEXT NOT NULL,
      greeting_override TEXT,
      status TEXT NOT NULL DEFAULT 'queued',
      attempts INTEGER NOT NULL DEFAULT 0,
      queue_key INTEGER NOT NULL,
      outcome TEXT
    )`,
  `CREATE INDEX contacts_queue ON contacts (status, queue_key)`,
];

export type ContactStatus = "queued" | "waiting" | "active" | "done" | "skipped";

export type ContactRow = {
  id: number;
  row: number;
  phone_number: string;
  initial_context: string;
  greeting_override: string | null;
  status: ContactStatus;
  attempts: number;
  queue_key: number;
  outcome: string | null;
  zone_id?: number | null;
};

/** Contacts a campaign holds at most (its file's rows, appended ones included). */
export const MAX_ROWS = 1_000_000;

/** Never-attempted contacts sort after due retries (whose key is their due time). */
export const PENDING_KEY = 9e15;

export type Duplicate = { row: number; phone_number: string; first_row: number };

/** Inserts packed chunks of contacts; a phone number already in the campaign is reported, not inserted. */
export function insertContacts(db: DoSql, parts: PackedContacts): { inserted: number; duplicates: Duplicate[] } {
  const duplicates: Duplicate[] = [];
  let inserted = 0;
  // Many contacts per statement: a statement per row cost ~20 µs a row (mostly the per-statement cost of the
  // counters trigger); this is ~6. Bound parameters are capped at 100, so multi-row VALUES would fit only 25
  // rows; one JSON parameter has no such cap. Rows go in order, so ON CONFLICT keeps a number's first row.
  for (const { rows, json } of parts) {
    const n = db.changes`INSERT INTO contacts (row, phone_number, initial_context, greeting_override, queue_key)
      SELECT value->>0, value->>1, value->>2, value->>3, ${PENDING_KEY} FROM json_each(${json}) WHERE true ON CONFLICT (phone_number) DO NOTHING`;
    inserted += n;
    if (n === rows) continue;
    // Rows not inserted are those whose number is stored under another row (a file's rows are distinct).
    const found = db.all<Duplicate>`SELECT j.value->>0 AS row, j.value->>1 AS phone_number, c.row AS first_row
      FROM json_each(${json}) j JOIN contacts c ON c.phone_number = j.value->>1
      WHERE c.row <> j.value->>0 ORDER BY j.key`;
    // Fails (and rolls the chunk back) rather than under-report, should a caller ever repeat a row number.
    if (n + found.length !== rows) throw new Error("importContacts: a chunk repeats a row number");
    for (const d of found) duplicates.push({ row: d.row, phone_number: d.phone_number, first_row: d.first_row });
  }
  return { inserted, duplicates };
}

/** How many contacts ended with one of `outcomes` (one JSON parameter however many: SQLite binds at most 100). */
export function countFinished(db: DoSql, outcomes: string[]): number {
  if (!outcomes.length) return 0;
  return (
    db.value<number>`SELECT count(*) FROM contacts WHERE status IN ('done', 'skipped') AND outcome IN (SELECT value FROM json_each(${JSON.stringify(outcomes)}))` ??
    0
  );
}

/** One page of the contacts that ended with one of `outcomes`, in contact order after `afterId`. */
export function finishedPage(db: DoSql, outcomes: string[], afterId: number, limit: number): { contacts: ContactInput[]; next: number | null } {
  if (!outcomes.length) return { contacts: [], next: null };
  const rows = db.all<ContactRow>`SELECT * FROM contacts WHERE id > ${afterId} AND status IN ('done', 'skipped')
    AND outcome IN (SELECT value FROM json_each(${JSON.stringify(outcomes)})) ORDER BY id LIMIT ${limit}`;
  return {
    contacts: rows.map((r) => ({
      row: r.row,
      phone_number: r.phone_number,
      initial_context: JSON.parse(r.initial_context),
      greeting_override: r.greeting_override ? JSON.parse(r.greeting_override) : null,
    })),
    next: rows.length === limit ? rows[rows.length - 1].id : null,
  };
}
