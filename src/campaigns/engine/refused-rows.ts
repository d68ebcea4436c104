// The campaign object's table of rows a background import with `on_invalid: "skip"` left out (filled by
// csv/refused-store.ts, served as GET /campaign/{id}/refused.csv): each row's line in the file, its cells as read
// (JSON) and its reasons (JSON). Its statement is migration v7 (shipped: never edited).
import type { DoSql } from "../../lib/do-sql";

export const REFUSED_ROWS_TABLE = [`CREATE TABLE refused_rows (row INTEGER PRIMARY KEY, fields TEXT NOT NULL, reasons TEXT NOT NULL)`];

/** Rows noted from `row` on are dropped (a slice past its checkpoint, a file read again, a failed import). */
export function dropRefusedFrom(db: DoSql, row: number): void {
  db.run`DELETE FROM refused_rows WHERE row >= ${row}`;
}
