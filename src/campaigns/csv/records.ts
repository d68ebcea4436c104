// RFC 4180 records from text that arrives in chunks, parsed with papaparse's own parser. Only complete records are
// returned; the unfinished tail (possibly inside a quoted field) waits for the next chunk. Each record carries its
// spreadsheet row number (the first record is row 1; blank lines count as rows, as a spreadsheet shows them).
import Papa from "papaparse";

export type RecordProblem = { row: number; msg: string; type: string; fatal: boolean };
/** Records in order, the first of them at row `firstRow` (one object per batch, not per record). */
export type RecordBatch = { firstRow: number; records: string[][]; problems: RecordProblem[] };

/** A record still unfinished after this many characters is refused: no single row is that long. */
export const MAX_RECORD_CHARS = 1 << 20;

/** The first line break outside quotes decides the file's line ending (CRLF or LF; a lone CR for old Mac files). */
export function detectNewline(text: string): "\n" | "\r\n" | "\r" | null {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (quoted) {
      if (ch === 34 /* " */) {
        if (text.charCodeAt(i + 1) === 34)
          i++; // an escaped quote
        else quoted = false;
      }
    } else if (ch === 34) {
      // Only a quote that opens a field starts quoting (RFC 4180); elsewhere it is data.
      const prev = i === 0 ? 44 : text.charCodeAt(i - 1);
      if (prev === 44 || prev === 10 || prev === 13) quoted = true;
    } else if (ch === 10) return "\n";
    else if (ch === 13) {
      if (i + 1 === text.length) return null; // CR at the very end: LF may follow in the next chunk
      return text.charCodeAt(i + 1) === 10 ? "\r\n" : "\r";
    }
  }
  return null;
}

export type Newline = "\n" | "\r\n" | "\r";

export class CsvRecords {
  private tail = "";
  private newline: Newline | null = null;
  private nextRow = 1;
  private done = false;

  /** Reads from a record boundary: `row` is the next record's row, `newline` the file's line ending if known. */
  constructor(from?: { row: number; newline: Newline | null }) {
    if (from) {
      this.nextRow = from.row;
      this.newline = from.newline;
    }
  }

  /** The line ending the file was found to use (null until a line ends). */
  get lineEnding(): Newline | null {
    return this.newline;
  }

  /** The text read but not yet returned as records: the start of the next record. */
  get pendingText(): string {
    return this.tail;
  }

  /** The row number the next record will get (the row an error in the unfinished tail belongs to). */
  get pendingRow(): number {
    return this.nextRow;
  }

  /** Position (0-based) of the field the unfinished tail has reached: where a decoding error sits in its row. */
  get pendingField(): number {
    let field = 0;
    let quoted = false;
    const t = this.tail;
    for (let i = 0; i < t.length; i++) {
      const ch = t.charCodeAt(i);
      if (quoted) {
        if (ch === 34) {
          if (t.charCodeAt(i + 1) === 34) i++;
          else quoted = false;
        }
      } else if (ch === 34 && (i === 0 || t.charCodeAt(i - 1) === 44)) quoted = true;
      else if (ch === 44) field++;
    }
    return field;
  }

  /** Feeds text; `final` marks the end of the file (the tail then becomes the last record). */
  push(text: string, final = false): RecordBatch {
    if (this.done) return { firstRow: this.nextRow, records: [], problems: [] };
    let input = this.tail + text;
    this.tail = "";
    if (this.newline === null) {
      this.newline = detectNewline(input);
      if (this.newline === null && !final) return this.keep(input);
      this.newline ??= "\n";
    }
    if (final) this.done = true;
    if (!input) return { firstRow: this.nextRow, records: [], problems: [] };

    const parser = new Papa.Parser({ delimiter: ",", newline: this.newline, quoteChar: '"' });
    const res = parser.parse(input, 0, !final) as {
      data: string[][];
      errors: { code: string; row: number }[];
      meta: { cursor: number };
    };
    const stripCr = this.newline === "\n";
    const records = res.data;
    const firstRow = this.nextRow;
    // A CRLF line in a file that began with LF: the CR is line ending, not data.
    if (stripCr) {
      for (const fields of records) {
        const last = fields[fields.length - 1];
        if (last.length && last.charCodeAt(last.length - 1) === 13) fields[fields.length - 1] = last.slice(0, -1);
      }
    }
    this.nextRow += res.data.length;

    const problems: RecordProblem[] = [];
    for (const e of res.errors) {
      if (e.row >= res.data.length && !final) continue; // about the unfinished tail: judged when it is complete
      if (e.code === "MissingQuotes") {
        problems.push({ row: firstRow + e.row, msg: "Quoted field is not closed before the end of the file", type: "csv_unclosed_quote", fatal: true });
      } else if (e.code === "InvalidQuotes") {
        problems.push({
          row: firstRow + e.row,
          msg: 'Malformed quotes: a quote inside a quoted field must be doubled ("")',
          type: "csv_invalid_quotes",
          fatal: false,
        });
      }
    }
    if (!final) {
      const rest = input.slice(res.meta.cursor);
      if (rest.length > MAX_RECORD_CHARS) {
        this.done = true;
        problems.push({
          row: this.nextRow,
          msg: `Row is longer than ${MAX_RECORD_CHARS} characters (or a quoted field is never closed)`,
          type: "csv_row_too_long",
          fatal: true,
        });
      } else this.tail = rest;
    }
    input = "";
    return { firstRow, records, problems };
  }

  private keep(input: string): RecordBatch {
    if (input.length > MAX_RECORD_CHARS) {
      this.done = true;
      return {
        firstRow: this.nextRow,
        records: [],
        problems: [
          {
            row: this.nextRow,
            msg: `Row is longer than ${MAX_RECORD_CHARS} characters (or a quoted field is never closed)`,
            type: "csv_row_too_long",
            fatal: true,
          },
        ],
      };
    }
    this.tail = input;
    return { firstRow: this.nextRow, records: [], problems: [] };
  }
}
