// The rows a partial import (`on_invalid: "skip"`) left out, returned as CSV so they can be fixed and sent again:
// the file's own columns as read, then `row` (in the file, header = 1) and `reason` (every problem of the row).
// Bounded: past MAX_REFUSED_ROWS rows (or MAX_REFUSED_CHARS of text) the rest are counted, not kept.
import Papa from "papaparse";
import type { Problem } from "../engine/types";

export const MAX_REFUSED_ROWS = 10_000;
export const MAX_REFUSED_CHARS = 4 * 1024 * 1024;

export type RefusedReport = { rows: number; csv: string; truncated: boolean };

/** What an import notes its left-out rows into: this list (a request's answer) or the campaign object's table (refused-store.ts). */
export interface RefusedNotes {
  /** Problems of rows after every row noted so far, in row order; `fieldsOf` gives a row's cells as read. */
  note(problems: readonly Problem[], fieldsOf: (row: number) => string[] | undefined): void;
  readonly count: number;
}

/** The CSV (CRLF) under `columns` (the header as read), each row padded or cut to the header's width. */
export function refusedCsv(columns: readonly string[], rows: readonly { row: number; fields: string[]; reasons: string[] }[]): string {
  const width = columns.length;
  const data = rows.map((r) => [...Array.from({ length: width }, (_, i) => r.fields[i] ?? ""), String(r.row), r.reasons.join("; ")]);
  return Papa.unparse({ fields: [...columns, "row", "reason"], data }, { newline: "\r\n" });
}

export class RefusedRows implements RefusedNotes {
  private readonly kept: { row: number; fields: string[]; reasons: string[] }[] = [];
  private chars = 0;
  count = 0;
  truncated = false;

  /** Problems of rows after every row noted so far, in row order; `fieldsOf` gives a row's cells as read. */
  note(problems: readonly Problem[], fieldsOf: (row: number) => string[] | undefined): void {
    for (const p of problems) {
      const last = this.kept[this.kept.length - 1];
      if (last && last.row === p.row) {
        last.reasons.push(p.msg);
        continue;
      }
      this.count++;
      const fields = fieldsOf(p.row) ?? [];
      const size = fields.reduce((n, f) => n + f.length, 0) + p.msg.length;
      if (this.kept.length >= MAX_REFUSED_ROWS || this.chars + size > MAX_REFUSED_CHARS) {
        this.truncated = true;
        continue;
      }
      this.chars += size;
      this.kept.push({ row: p.row, fields, reasons: [p.msg] });
    }
  }

  /** The CSV (CRLF) under `columns` (the header as read), each row padded or cut to the header's width. */
  report(columns: readonly string[]): RefusedReport {
    return { rows: this.count, csv: refusedCsv(columns, this.kept), truncated: this.truncated };
  }
}
