// Contact and attempt counts. The object keeps them in a one-row `counters` table maintained by SQLite
// triggers from each row's old and new values (so no code path can forget one); `recount` derives the same numbers
// by scanning, for the migration that introduces the table and for tests that check the two always agree.
import { ANSWERED_NO_CONVERSATION, FAILED_CALL_STATUSES } from "./outcomes";
import { fixedSql, type DoSql } from "../../lib/do-sql";
import type { CampaignCounts } from "./types";

const FAILED_CALL = `(${[...FAILED_CALL_STATUSES].map((s) => `'${s}'`).join(", ")})`;

/** The contact was not called because its number is on the organization's suppression list. */
const SUPPRESSED = (r: string) => `(${r}.status = 'done' AND coalesce(${r}.outcome, '') = 'suppressed')`;

/** The counters over one contacts row (`R`) as migrations v2 and v4 built them (shipped: never edited). */
const CONTACT_TERMS_V4: Record<string, (r: string) => string> = {
  total: () => `1`,
  // A suppressed contact is dealt with (never called): processed and not reached, not pending.
  processed: (r) => `(${r}.attempts > 0 OR ${SUPPRESSED(r)})`,
  completed: (r) => `(${r}.status = 'done' AND ${r}.outcome = 'completed')`,
  failed: (r) => `(${r}.status IN ('done', 'skipped') AND (${r}.attempts > 0 OR ${SUPPRESSED(r)}) AND coalesce(${r}.outcome, '') <> 'completed')`,
  pending: (r) => `(${r}.attempts = 0 AND NOT ${SUPPRESSED(r)})`,
  suppressed: (r) => SUPPRESSED(r),
  awaiting_retry: (r) => `(${r}.attempts > 0 AND ${r}.status IN ('queued', 'waiting'))`,
  waiting: (r) => `(${r}.status IN ('queued', 'waiting'))`,
};

/** Answered calls are not all conversations (issue 39): a contact answered on whose call nobody spoke is not `completed`. */
const REACHED = `('completed', '${ANSWERED_NO_CONVERSATION}')`;

/** Each counter as an expression over one contacts row (`R`), since migration v6. */
const CONTACT_TERMS: Record<string, (r: string) => string> = {
  ...CONTACT_TERMS_V4,
  answered_no_conversation: (r) => `(${r}.status = 'done' AND ${r}.outcome = '${ANSWERED_NO_CONVERSATION}')`,
  failed: (r) => `(${r}.status IN ('done', 'skipped') AND (${r}.attempts > 0 OR ${SUPPRESSED(r)}) AND coalesce(${r}.outcome, '') NOT IN ${REACHED})`,
};

/** Each counter as an expression over one attempts row. */
const ATTEMPT_TERMS: Record<string, (r: string) => string> = {
  executed: () => `1`,
  open: (r) => `(${r}.status IN ('dialing', 'in_flight'))`,
  failed_calls: (r) => `(${r}.status IN ${FAILED_CALL})`,
};

const columnsOf = (contactTerms: Record<string, (r: string) => string>) => [...Object.keys(contactTerms), ...Object.keys(ATTEMPT_TERMS)];
const COLUMNS = columnsOf(CONTACT_TERMS);

function triggers(table: string, terms: Record<string, (r: string) => string>): string[] {
  const set = (sign: "+" | "-", r: string) =>
    Object.entries(terms)
      .map(([k, f]) => `${k} = ${k} ${sign} ${f(r)}`)
      .join(", ");
  const both = Object.entries(terms)
    .map(([k, f]) => `${k} = ${k} - ${f("OLD")} + ${f("NEW")}`)
    .join(", ");
  return [
    `CREATE TRIGGER ${table}_counts_ins AFTER INSERT ON ${table} BEGIN UPDATE counters SET ${set("+", "NEW")}; END`,
    `CREATE TRIGGER ${table}_counts_del AFTER DELETE ON ${table} BEGIN UPDATE counters SET ${set("-", "OLD")}; END`,
    `CREATE TRIGGER ${table}_counts_upd AFTER UPDATE ON ${table} BEGIN UPDATE counters SET ${both}; END`,
  ];
}

/** Every counter by scanning the rows: `(SELECT … FROM contacts c), (SELECT … FROM attempts a)`. */
function scan(contactTerms: Record<string, (r: string) => string>): string {
  const scanC = Object.entries(contactTerms)
    .map(([k, f]) => `coalesce(sum(${f("c")}), 0) AS ${k}`)
    .join(", ");
  const scanA = Object.entries(ATTEMPT_TERMS)
    .map(([k, f]) => `coalesce(sum(${f("a")}), 0) AS ${k}`)
    .join(", ");
  return `(SELECT ${scanC} FROM contacts c), (SELECT ${scanA} FROM attempts a)`;
}
const RECOUNT = fixedSql(scan(CONTACT_TERMS));

function create(contactTerms: Record<string, (r: string) => string>): string[] {
  const columns = columnsOf(contactTerms);
  return [
    `CREATE TABLE counters (id INTEGER PRIMARY KEY CHECK (id = 1), ${columns.map((c) => `${c} INTEGER NOT NULL`).join(", ")})`,
    `INSERT INTO counters (id, ${columns.join(", ")}) SELECT 1, ${columns.join(", ")} FROM ${scan(contactTerms)}`,
    ...triggers("contacts", contactTerms),
    ...triggers("attempts", ATTEMPT_TERMS),
  ];
}

function rebuild(contactTerms: Record<string, (r: string) => string>): string[] {
  return [
    ...["contacts", "attempts"].flatMap((t) => ["ins", "del", "upd"].map((k) => `DROP TRIGGER IF EXISTS ${t}_counts_${k}`)),
    `DROP TABLE counters`,
    ...create(contactTerms),
  ];
}

/** Migration v2: the counters table, filled from the rows already there, and its triggers. */
export const countersMigration = (): string[] => create(CONTACT_TERMS_V4);

/** Migration v4: the counters again, with `suppressed` (the triggers are rebuilt from the terms above). */
export const countersRebuild = (): string[] => rebuild(CONTACT_TERMS_V4);

/** Migration v6: the counters again, with `answered_no_conversation` apart from `completed` and `failed`. */
export const countersRebuildV6 = (): string[] => rebuild(CONTACT_TERMS);

type Raw = Record<(typeof COLUMNS)[number], number>;

function toCounts(k: Raw): CampaignCounts {
  return {
    total: k.total,
    processed: k.processed,
    completed: k.completed,
    answered_no_conversation: k.answered_no_conversation,
    failed: k.failed,
    pending: k.pending,
    in_progress: k.open,
    awaiting_retry: k.awaiting_retry,
    executed: k.executed,
    queued: k.executed + k.waiting,
    failed_calls: k.failed_calls,
    suppressed: k.suppressed,
  };
}

/** The maintained counts (one row read). */
export function readCounts(db: DoSql): CampaignCounts {
  return toCounts(db.one<Raw>`SELECT * FROM counters WHERE id = 1`!);
}

/** The same counts by scanning every contact and attempt. */
export function recount(db: DoSql): CampaignCounts {
  return toCounts(db.one<Raw>`SELECT * FROM ${RECOUNT}`!);
}
