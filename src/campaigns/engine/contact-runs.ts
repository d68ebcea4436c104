// What each contact's calls came to: the runs of its attempts, and the dispositions the voice agent chose. A run's
// disposition arrives from its call session when the call ends (before or after the carrier's final status); it is
// kept on the attempt, counted once per attempt, and logged. With it comes who answered as the agent judged it (its
// answering-machine class), kept on the attempt for progress' per-class count.
import type { RunOutcome } from "../../calls/campaign/campaign-calls";
import type { DoSql } from "../../lib/do-sql";
import type { CampaignLog } from "./logs";
import type { AttemptRow } from "./attempts";
import type { ContactRow } from "./contacts";
import { contactLabel } from "./row-label";

export const CONTACT_RUNS_MIGRATION = [
  `ALTER TABLE attempts ADD COLUMN disposition TEXT`,
  `CREATE TABLE dispositions (code TEXT PRIMARY KEY, n INTEGER NOT NULL)`,
];

/** Migration v8: each attempt's answering-machine class (null: the agent did not judge, or not told yet). */
export const ATTEMPT_AMD_CLASS = [`ALTER TABLE attempts ADD COLUMN amd_class TEXT`];

/** Records a run's answering-machine class on its attempt once (a repeat or another run's report changes nothing). */
export function recordAmdClass(db: DoSql, o: RunOutcome): boolean {
  if (!o.amdClass) return false;
  return !!db.run`UPDATE attempts SET amd_class = ${o.amdClass}, run_id = coalesce(run_id, ${o.runId})
    WHERE contact_id = ${o.contactId} AND attempt = ${o.attempt} AND (run_id IS NULL OR run_id = ${o.runId}) AND amd_class IS NULL`;
}

/** Records a run's disposition once (a repeat or another run's report changes nothing). */
export function recordDisposition(db: DoSql, log: CampaignLog, o: RunOutcome): boolean {
  if (!o.disposition) return false;
  const a = db.one<AttemptRow & { disposition: string | null }>`SELECT * FROM attempts WHERE contact_id = ${o.contactId} AND attempt = ${o.attempt}`;
  if (!a || (a.run_id != null && a.run_id !== o.runId) || a.disposition != null) return false;
  const row = db.value<number>`SELECT row FROM contacts WHERE id = ${o.contactId}`;
  db.run`UPDATE attempts SET disposition = ${o.disposition}, run_id = coalesce(run_id, ${o.runId}) WHERE id = ${a.id}`;
  db.run`INSERT INTO dispositions (code, n) VALUES (${o.disposition}, 1) ON CONFLICT (code) DO UPDATE SET n = n + 1`;
  log.write("info", "call_disposition", `${contactLabel(o.contactId, row)}: the agent's disposition is "${o.disposition}"`, {
    row,
    contact_id: o.contactId,
    attempt: o.attempt,
    run_id: o.runId,
    disposition: o.disposition,
  });
  return true;
}

/** Calls per disposition so far. */
export function dispositionCounts(db: DoSql): Record<string, number> {
  return Object.fromEntries(db.all<{ code: string; n: number }>`SELECT code, n FROM dispositions ORDER BY code`.map((r) => [r.code, r.n]));
}

export type MachineCounts = { answered: number; machines: number; rate: number; amd_classes: Record<string, number> };

/**
 * How often a machine answered: of the attempts answered (final status completed or voicemail), those a machine took
 * (voicemail: a voicemail greeting, a mailbox's beep or a fax, by the carrier's verdict or the agent's own detection);
 * and the attempts per class the agent judged (an IVR menu and a call screening service apart from a person).
 */
export function machineCounts(db: DoSql): MachineCounts {
  const r = db.one<{ answered: number; machines: number }>`SELECT count(*) AS answered, coalesce(sum(status = 'voicemail'), 0) AS machines
    FROM attempts WHERE status IN ('completed', 'voicemail')`;
  const answered = r?.answered ?? 0;
  const machines = r?.machines ?? 0;
  const classes = db.all<{
    cls: string;
    n: number;
  }>`SELECT amd_class AS cls, count(*) AS n FROM attempts WHERE amd_class IS NOT NULL GROUP BY amd_class ORDER BY amd_class`;
  return { answered, machines, rate: answered ? machines / answered : 0, amd_classes: Object.fromEntries(classes.map((c) => [c.cls, c.n])) };
}

export type ContactView = {
  id: number;
  row: number;
  phone_number: string;
  status: "pending" | "retry_waiting" | "in_progress" | "done" | "skipped";
  attempts: number;
  outcome: string | null;
  disposition: string | null;
  runs: { attempt: number; run_id: number | null; status: string; disposition: string | null }[];
  /** The contact's CSV columns (exports ask for them). */
  context?: Record<string, string>;
};

const STATUS: Record<ContactRow["status"], ContactView["status"]> = {
  queued: "pending",
  waiting: "retry_waiting",
  active: "in_progress",
  done: "done",
  skipped: "skipped",
};

/** Contacts in row order after contact id `after`, each with its attempts' runs (two queries a page). */
export function contactsPage(db: DoSql, after: number, limit: number, withContext = false): { items: ContactView[]; next: number | null } {
  const rows = db.all<ContactRow>`SELECT * FROM contacts WHERE id > ${after} ORDER BY id LIMIT ${limit + 1}`;
  const page = rows.slice(0, limit);
  const ids = JSON.stringify(page.map((r) => r.id));
  const attempts = db.all<AttemptRow & { disposition: string | null }>`SELECT * FROM attempts
    WHERE contact_id IN (SELECT value FROM json_each(${ids})) ORDER BY contact_id, attempt`;
  const byContact = new Map<number, ContactView["runs"]>();
  for (const a of attempts) {
    const list = byContact.get(a.contact_id) ?? [];
    list.push({ attempt: a.attempt, run_id: a.run_id, status: a.status, disposition: a.disposition });
    byContact.set(a.contact_id, list);
  }
  const items = page.map((r) => {
    const runs = byContact.get(r.id) ?? [];
    return {
      id: r.id,
      row: r.row,
      phone_number: r.phone_number,
      status: STATUS[r.status],
      attempts: r.attempts,
      outcome: r.outcome,
      disposition: [...runs].reverse().find((x) => x.disposition)?.disposition ?? null,
      runs,
      ...(withContext ? { context: JSON.parse(r.initial_context) as Record<string, string> } : {}),
    };
  });
  return { items, next: rows.length > limit ? page[page.length - 1].id : null };
}
