// Contacts appended to an existing campaign (POST /campaign/{id}/contacts, ../append.ts) wait here until the whole
// file has passed. They live in a table of their own that dispatch, the counters' triggers and every read ignore,
// so a file refused halfway, or a Worker that dies mid-append, leaves nothing queued or dialing. One commit moves
// them into `contacts` in a single transaction (the counters count them then, all at once). One batch at a time;
// a batch untouched for a minute (appendLimits.staleMs) is abandoned and dropped, by the next append or by its
// timer. While a batch is live, a running campaign whose calls are all done waits for it rather than completing
// under the append (which would then be refused).
import type { DoSql } from "../../lib/do-sql";
import { engineConflict } from "./refusals";
import type { PackedContacts } from "./packed";
import { MAX_ROWS, PENDING_KEY, type Duplicate } from "./contacts";
import type { CampaignLog } from "./logs";
import type { Timers } from "./timers";
import type { Problem } from "./types";

export const STAGED_MIGRATION = [
  // room: new contacts the campaign can still take (the row limit); fresh: staged rows whose number is new.
  `CREATE TABLE staged_batch (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    token TEXT NOT NULL,
    began_at INTEGER NOT NULL,
    touched_at INTEGER NOT NULL,
    room INTEGER NOT NULL,
    fresh INTEGER NOT NULL DEFAULT 0
  )`,
  // existing = 1: the number is already a contact, so the row is skipped at commit. It is staged anyway so that a
  // second row with the same number in the file is still caught as a duplicate, as create catches it.
  `CREATE TABLE staged_contacts (
    row INTEGER NOT NULL,
    phone_number TEXT NOT NULL UNIQUE,
    initial_context TEXT NOT NULL,
    greeting_override TEXT,
    existing INTEGER NOT NULL
  )`,
];

/** Tests lower these to reach the limits cheaply. */
export const appendLimits = {
  /** Contacts a campaign holds at most, appended ones included (create's limit). */
  maxRows: MAX_ROWS,
  /** A batch not written to for this long is abandoned: its Worker died or gave up. A chunk takes well under a
   *  second to validate, so a live append touches it far more often. */
  staleMs: 60_000,
};

/** Skipped rows named in the answer at most. */
const EXAMPLES = 5;

type BatchRow = { token: string; began_at: number; touched_at: number; room: number; fresh: number };

export type StageResult = { inserted: number; duplicates: Duplicate[]; stop?: Problem };
export type CommitResult = { added: number; skipped_existing: number; skipped_examples: { row: number; phone_number: string }[] };

export class StagedContacts {
  constructor(
    private readonly db: DoSql,
    private readonly timers: Timers,
    private readonly log: CampaignLog,
  ) {}

  private batch(): BatchRow | null {
    return this.db.one<BatchRow>`SELECT token, began_at, touched_at, room, fresh FROM staged_batch WHERE id = 1`;
  }

  /** The batch `token` opened; 409 when it is gone (abandoned and dropped, or committed). */
  private need(token: string): BatchRow {
    const b = this.batch();
    if (!b || b.token !== token) throw engineConflict("This append was abandoned (it stayed idle too long) or is already finished; send the file again");
    return b;
  }

  /** Whether an append is under way (a batch touched within staleMs): a running campaign does not complete then. */
  live(now: number): boolean {
    const touched = this.db.value<number>`SELECT touched_at FROM staged_batch WHERE id = 1`;
    return touched != null && now - touched < appendLimits.staleMs;
  }

  /** Opens a batch that may add `room` new contacts; refuses while another append is live, drops a stale one. */
  begin(now: number, room: number): string {
    const b = this.batch();
    if (b && now - b.touched_at < appendLimits.staleMs) {
      throw engineConflict("Another file is being added to this campaign; try again once that request has answered");
    }
    if (b) this.abandon(b, "superseded");
    const token = crypto.randomUUID();
    this.db.run`INSERT INTO staged_batch (id, token, began_at, touched_at, room) VALUES (1, ${token}, ${now}, ${now}, ${room})`;
    this.timers.set("staged", 0, now + appendLimits.staleMs);
    return token;
  }

  /**
   * Stages one chunk (in row order). A number already a contact is staged as skipped; a number seen earlier in the
   * file is a duplicate (reported, not staged). `stop`: the row where the campaign's row limit is passed.
   */
  stage(token: string, parts: PackedContacts, now: number): StageResult {
    const b = this.need(token);
    const duplicates: Duplicate[] = [];
    let fresh = 0;
    let inserted = 0;
    for (const { rows, json } of parts) {
      // Two statements (new numbers, then known ones) so the new ones are counted against the row limit. A number
      // is either known or not, so row order among a number's repeats is kept: its first row wins either way.
      const n = this.db.changes`INSERT INTO staged_contacts (row, phone_number, initial_context, greeting_override, existing)
        SELECT value->>0, value->>1, value->>2, value->>3, 0 FROM json_each(${json})
        WHERE NOT EXISTS (SELECT 1 FROM contacts c WHERE c.phone_number = value->>1) ON CONFLICT (phone_number) DO NOTHING`;
      const known = this.db.changes`INSERT INTO staged_contacts (row, phone_number, initial_context, greeting_override, existing)
        SELECT value->>0, value->>1, value->>2, value->>3, 1 FROM json_each(${json})
        WHERE EXISTS (SELECT 1 FROM contacts c WHERE c.phone_number = value->>1) ON CONFLICT (phone_number) DO NOTHING`;
      fresh += n;
      inserted += n + known;
      if (n + known === rows) continue;
      const found = this.db.all<Duplicate>`SELECT j.value->>0 AS row, j.value->>1 AS phone_number, s.row AS first_row
        FROM json_each(${json}) j JOIN staged_contacts s ON s.phone_number = j.value->>1
        WHERE s.row <> j.value->>0 ORDER BY j.key`;
      // A chunk sent twice would look like a file without duplicates: fail (and roll back) rather than under-report.
      if (n + known + found.length !== rows) throw new Error("stageAppend: a chunk repeats a row number");
      for (const d of found) duplicates.push({ row: d.row, phone_number: d.phone_number, first_row: d.first_row });
    }
    this.db.run`UPDATE staged_batch SET touched_at = ${now}, fresh = fresh + ${fresh} WHERE id = 1`;
    const result: StageResult = { inserted, duplicates };
    // Only the chunk that crosses the limit reports it (the import stops reading there).
    if (b.fresh <= b.room && b.fresh + fresh > b.room) {
      const row = this.db.value<number>`SELECT row FROM staged_contacts WHERE existing = 0 ORDER BY row LIMIT 1 OFFSET ${b.room}`!;
      const max = appendLimits.maxRows;
      result.stop = {
        row,
        msg: `The campaign would have more than ${max} contacts: it has ${max - b.room}, so a file can add at most ${b.room} new numbers`,
        type: "csv_too_many_rows",
        ctx: { max_rows: max, existing: max - b.room },
      };
    }
    return result;
  }

  /** Moves the batch's new contacts into the campaign (inside the caller's transaction) and drops the batch. */
  commit(token: string): CommitResult {
    this.need(token);
    // Row order gives the new contacts ids (and so their dial order among never-attempted ones) in file order.
    const added = this.db.changes`INSERT INTO contacts (row, phone_number, initial_context, greeting_override, queue_key)
      SELECT row, phone_number, initial_context, greeting_override, ${PENDING_KEY} FROM staged_contacts WHERE existing = 0 ORDER BY row
      ON CONFLICT (phone_number) DO NOTHING`;
    const staged = this.db.value<number>`SELECT count(*) FROM staged_contacts` ?? 0;
    const examples = this.db.all<{ row: number; phone_number: string }>`SELECT row, phone_number FROM staged_contacts
      WHERE existing = 1 ORDER BY row LIMIT ${EXAMPLES}`;
    this.drop();
    // Only one batch is open at a time, so `existing` cannot go stale; whatever did not go in was a known number.
    return { added, skipped_existing: staged - added, skipped_examples: examples.map((e) => ({ row: e.row, phone_number: e.phone_number })) };
  }

  /** Drops the batch `token` opened (the file did not pass, or its request failed); false when it is not there. */
  discard(token: string): boolean {
    const b = this.batch();
    if (!b || b.token !== token) return false;
    this.drop();
    return true;
  }

  /** The `staged` timer: drops the batch once stale, else looks again when it would be. */
  expire(now: number): void {
    const b = this.batch();
    if (!b) return;
    if (now - b.touched_at >= appendLimits.staleMs) this.abandon(b, "idle");
    else this.timers.set("staged", 0, b.touched_at + appendLimits.staleMs);
  }

  private abandon(b: BatchRow, why: "idle" | "superseded"): void {
    const rows = this.db.value<number>`SELECT count(*) FROM staged_contacts` ?? 0;
    this.drop();
    this.log.write(
      "warning",
      "contacts_append_abandoned",
      `An append of contacts was abandoned before it finished; its ${rows} staged row(s) were dropped, none added`,
      {
        staged_rows: rows,
        began_at: new Date(b.began_at).toISOString(),
        reason: why,
      },
    );
  }

  private drop(): void {
    this.db.run`DELETE FROM staged_contacts`;
    this.db.run`DELETE FROM staged_batch`;
    this.timers.clear("staged");
  }
}
