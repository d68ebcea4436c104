// The rows a background import with `on_invalid: "skip"` leaves out, kept in the campaign object's SQLite
// (engine/refused-rows.ts): the
// import runs in slices, each a new reader, so a list in memory would not outlive its slice. Served as
// GET /campaign/{id}/refused.csv in the synchronous answer's format (refused.ts), with the same bounds. A slice taken
// over after a crash drops the rows noted past its checkpoint, as it drops the contacts, and goes on from the
// checkpoint's tally. A row's problems are all judged in one chunk, so a checkpoint never splits them.
import type { DoSql } from "../../lib/do-sql";
import type { Problem } from "../engine/types";
import { MAX_REFUSED_CHARS, MAX_REFUSED_ROWS, type RefusedNotes, type RefusedReport, refusedCsv } from "./refused";

/** The tally kept with each checkpoint: rows refused, rows and characters stored, whether some were only counted. */
export type RefusedTally = { count: number; stored: number; chars: number; truncated: boolean };
export const NO_REFUSED: RefusedTally = { count: 0, stored: 0, chars: 0, truncated: false };

export class StoredRefusedRows implements RefusedNotes {
  private readonly t: RefusedTally;
  /** The last row noted, and whether it was stored (its further problems are added to it). */
  private last: { row: number; stored: boolean } | null = null;

  constructor(
    private readonly db: DoSql,
    from: RefusedTally,
  ) {
    this.t = { ...from };
  }

  get count(): number {
    return this.t.count;
  }

  tally(): RefusedTally {
    return { ...this.t };
  }

  note(problems: readonly Problem[], fieldsOf: (row: number) => string[] | undefined): void {
    for (const p of problems) {
      if (this.last?.row === p.row) {
        if (this.last.stored) this.db.run`UPDATE refused_rows SET reasons = json_insert(reasons, '$[#]', ${p.msg}) WHERE row = ${p.row}`;
        continue;
      }
      this.t.count++;
      const fields = fieldsOf(p.row) ?? [];
      const size = fields.reduce((n, f) => n + f.length, 0) + p.msg.length;
      const stored = this.t.stored < MAX_REFUSED_ROWS && this.t.chars + size <= MAX_REFUSED_CHARS;
      this.last = { row: p.row, stored };
      if (!stored) {
        this.t.truncated = true;
        continue;
      }
      this.t.stored++;
      this.t.chars += size;
      this.db.run`INSERT OR REPLACE INTO refused_rows (row, fields, reasons) VALUES (${p.row}, ${JSON.stringify(fields)}, ${JSON.stringify([p.msg])})`;
    }
  }
}

/** The stored rows as the synchronous answer's report, under the file's `columns`. */
export function storedRefusedReport(db: DoSql, columns: readonly string[], tally: RefusedTally): RefusedReport {
  const rows = db.all<{ row: number; fields: string; reasons: string }>`SELECT row, fields, reasons FROM refused_rows ORDER BY row`.map((r) => ({
    row: r.row,
    fields: JSON.parse(r.fields) as string[],
    reasons: JSON.parse(r.reasons) as string[],
  }));
  return { rows: tally.count, csv: refusedCsv(columns, rows), truncated: tally.truncated };
}
