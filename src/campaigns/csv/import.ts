// Streams a CSV from its bytes to the campaign's storage: decode (strict UTF-8), parse (papaparse), check every row
// (contacts.ts), and hand valid contacts to the sink in chunks while later rows are still being read. Memory stays
// flat: one text chunk, one contact chunk in flight, one being filled, and at most `maxItems` problems.
// Duplicates are judged by the sink (the campaign object holds every number already imported).
import { boundedInput, type ValidationItem } from "../../lib/errors";
import type { NumberReading } from "../../telephony/numbers";
import type { ContactInput } from "../engine/object-api";
import { MAX_ROWS } from "../engine/contacts";
import type { Problem } from "../engine/types";
import { isBlankRecord, PHONE, readHeader, readRow, type Header } from "./contacts";
import { CsvRecords, type Newline } from "./records";
import { type RefusedNotes, RefusedRows, type RefusedReport } from "./refused";
import { Utf8Chunks, utf8Length } from "./utf8";

export type ImportSink = {
  /** `stop`: a problem that ends the import at its row (an append passing the campaign's row limit). */
  importContacts(chunk: ContactInput[]): Promise<{ inserted: number; duplicates: { row: number; phone_number: string; first_row: number }[]; stop?: Problem }>;
};

export type ImportOptions = {
  pbx: boolean;
  /** How a national number is read: the campaign's default_country, else the country suggested in its error. */
  numbers?: NumberReading;
  /**
   * Template variables the agent uses and gives no default: each must be a column (checked after the rows, in the
   * order create checks), never blank in a row (a row problem, `template_value_empty`).
   */
  requiredVariables: string[];
  sink: ImportSink;
  /** Contacts per sink call at most. */
  chunkRows?: number;
  /** Characters of cell text per sink call at most (bounds a chunk of wide rows). */
  chunkChars?: number;
  /** Problems reported (the total is counted regardless). */
  maxItems?: number;
  /** Echoed inputs kept as a 422 answer bounds them (for problems stored rather than answered at once). */
  boundInputs?: boolean;
  /** Contacts allowed in one file. */
  maxRows?: number;
  /**
   * A partial import: rows with problems are left out (and returned as CSV) instead of failing the file. Problems of
   * the file itself (its header, encoding, size, a missing template column, no good row) still fail it.
   */
  skipInvalid?: boolean;
  /** With skipInvalid: where the left-out rows are noted (a background import's table); a list answered otherwise. */
  refusedNotes?: RefusedNotes;
  /** Where the file is named in the request: loc prefix of every item. */
  loc?: (string | number)[];
  /** The organization's destination policy, judged on each valid number (null = may be dialed). */
  destination?: (phoneNumber: string) => { message: string; type: string; ctx?: Record<string, unknown> } | null;
  /** The organization's audio greetings: a contact's greeting_override_recording_id must name one. */
  recordings?: ReadonlySet<string>;
};

/** `refused`: with `skipInvalid`, the rows left out (null when none was). */
export type ImportOutcome =
  | { ok: true; rows: number; inserted: number; columns: string[]; refused?: RefusedReport | null }
  | { ok: false; items: ValidationItem[]; total: number };

/** The first `max` problems in row order, and how many there were in all. */
class ProblemReport {
  readonly kept: Problem[] = [];
  total = 0;
  constructor(
    private readonly max: number,
    private readonly bound: boolean,
  ) {}

  /** Adds problems of rows after every row already added (sorted among themselves here). */
  addSorted(problems: Problem[]): void {
    if (!problems.length) return;
    this.total += problems.length;
    if (this.kept.length >= this.max) return;
    problems.sort((a, b) => a.row - b.row);
    for (const p of problems) {
      if (this.kept.length >= this.max) break;
      this.kept.push(this.bound && p.input !== undefined ? { ...p, input: boundedInput(p.input) as string } : p);
    }
  }
}

export function toItems(problems: Problem[], total: number, loc: (string | number)[]): ValidationItem[] {
  return problems.map((p, i) => {
    const item: ValidationItem = { loc: p.column === undefined ? [...loc, p.row] : [...loc, p.row, p.column], msg: p.msg, type: p.type };
    if (p.input !== undefined) item.input = p.input;
    const ctx = i === 0 ? { ...p.ctx, total_errors: total } : p.ctx;
    if (ctx) item.ctx = ctx;
    return item;
  });
}

/** Where a stopped import stands, to go on from there later (JSON): everything before `offset` has been read and
 *  its contacts stored. */
export type ImportCheckpoint = {
  /** Byte offset in the file of the next record (a record boundary). */
  offset: number;
  /** That record's row. */
  row: number;
  newline: Newline | null;
  /** The header row's cells as read (null: not read yet), and its row. */
  header: string[] | null;
  headerRow: number;
  dataRows: number;
  inserted: number;
  problems: Problem[];
  totalProblems: number;
};

/**
 * The import's state between chunks of text: decode and split are the caller's; this reads records, checks rows and
 * hands contacts to the sink. `feed` flushes by itself once a chunk is full (chunkRows/chunkChars), keeping one
 * chunk in flight; a caller that checkpoints passes Infinity for both and calls `flush` + `settle` itself.
 */
export class CsvImport {
  private readonly chunkRows: number;
  private readonly chunkChars: number;
  private readonly maxRows: number;
  private readonly loc: (string | number)[];
  private readonly report: ProblemReport;
  private readonly csv: CsvRecords;
  private header: Header | null = null;
  /** Positions of the columns of `requiredVariables`: a row must not leave them blank. */
  private requiredColumns: number[] = [];
  private headerCells: string[] | null = null;
  private headerRow = 0;
  private dataRows = 0;
  private inserted = 0;
  /** Set once no further record can change the outcome (a fatal problem, or too many rows). */
  stopped = false;
  // Contacts being filled, and problems of the same rows: they are reported together, in row order, once the sink
  // has judged the chunk's duplicates.
  private batch: ContactInput[] = [];
  private batchChars = 0;
  private pending: Problem[] = [];
  private inFlight: Promise<Problem[]> | null = null;
  /** With skipInvalid: the rows left out, and the cells of the rows not judged yet (this chunk and the one in flight). */
  private readonly refused: RefusedNotes | null;
  private readonly cells = new Map<number, string[]>();
  /** The last data row taken, and the last row of the chunk in flight. */
  private lastRow = 0;
  private inFlightLast = 0;

  constructor(
    private readonly o: ImportOptions,
    from?: ImportCheckpoint,
  ) {
    // Big chunks: each call to the campaign object costs a transaction whose price grows with the table, so fewer
    // calls import much faster (measured in bench/csv-import); the character bound keeps a chunk to a few MB.
    this.chunkRows = o.chunkRows ?? 25_000;
    this.chunkChars = o.chunkChars ?? 4 * 1024 * 1024;
    this.maxRows = o.maxRows ?? MAX_ROWS;
    this.loc = o.loc ?? ["body", "source_url"];
    this.report = new ProblemReport(o.maxItems ?? 100, o.boundInputs ?? false);
    this.refused = o.skipInvalid ? (o.refusedNotes ?? new RefusedRows()) : null;
    this.csv = new CsvRecords(from && { row: from.row, newline: from.newline });
    if (from) {
      if (from.header) this.readHeader(from.header, from.headerRow);
      this.dataRows = from.dataRows;
      this.inserted = from.inserted;
      this.report.kept.push(...from.problems);
      this.report.total = from.totalProblems;
    }
  }

  /** Contacts stored so far (as the sink reported). */
  get insertedRows(): number {
    return this.inserted;
  }

  /** Data rows read so far (good or not). */
  get rowsRead(): number {
    return this.dataRows;
  }

  /** Contacts waiting in the chunk being filled. */
  get batchRows(): number {
    return this.batch.length;
  }

  /** Where the import stands. Only between chunks: nothing in the batch or in flight. `offset` is the file offset
   *  just after the last text fed. */
  checkpoint(offset: number): ImportCheckpoint {
    if (this.batch.length || this.pending.length || this.inFlight) throw new Error("checkpoint with contacts in flight");
    return {
      offset: offset - utf8Length(this.csv.pendingText),
      row: this.csv.pendingRow,
      newline: this.csv.lineEnding,
      header: this.headerCells,
      headerRow: this.headerRow,
      dataRows: this.dataRows,
      inserted: this.inserted,
      problems: this.report.kept,
      totalProblems: this.report.total,
    };
  }

  private readHeader(cells: string[], row: number): Problem[] {
    const h = readHeader(cells, row, this.o.pbx);
    if (h.header) {
      const names = h.header.names.map((n) => n.toLowerCase());
      this.requiredColumns = this.o.requiredVariables.map((v) => names.indexOf(v.toLowerCase())).filter((i) => i >= 0);
      this.header = h.header;
      this.headerCells = cells;
      this.headerRow = row;
    }
    return h.problems;
  }

  private send(contacts: ContactInput[], problems: Problem[]): Promise<Problem[]> {
    if (contacts.length === 0) return Promise.resolve(problems);
    return this.o.sink.importContacts(contacts).then((res) => {
      this.inserted += res.inserted;
      const phoneColumn = this.header ? this.header.names[this.header.phone] : PHONE;
      for (const d of res.duplicates) {
        problems.push({
          row: d.row,
          column: phoneColumn,
          msg: `Duplicate phone number: ${d.phone_number} is already in row ${d.first_row}`,
          type: "phone_number_duplicate",
          input: d.phone_number,
          ctx: { first_row: d.first_row },
        });
      }
      if (res.stop) {
        problems.push(res.stop);
        this.stopped = true;
      }
      return problems;
    });
  }

  /** Hands the current chunk to the sink, after the previous one has been judged (one in flight at a time). */
  async flush(): Promise<void> {
    const previous = this.inFlight;
    const previousLast = this.inFlightLast;
    this.inFlightLast = this.lastRow;
    this.inFlight = this.send(this.batch, this.pending);
    this.batch = [];
    this.batchChars = 0;
    this.pending = [];
    if (previous) this.judged(await previous, previousLast);
  }

  /** Waits for the chunk in flight and reports its problems. */
  async settle(): Promise<void> {
    const last = this.inFlight;
    this.inFlight = null;
    if (last) this.judged(await last, Number.POSITIVE_INFINITY);
  }

  /** A chunk's problems (its rows up to `lastRow`): reported, and with skipInvalid its rows' cells let go. */
  private judged(problems: Problem[], lastRow: number): void {
    if (this.refused) problems.sort((a, b) => a.row - b.row);
    this.report.addSorted(problems);
    if (!this.refused) return;
    this.refused.note(problems, (row) => this.cells.get(row));
    // Rows are taken in file order, so the map's first keys are this chunk's.
    for (const row of this.cells.keys()) {
      if (row > lastRow) break;
      this.cells.delete(row);
    }
  }

  private fail(p: Problem): void {
    this.pending.push(p);
    this.stopped = true;
  }

  /** The required columns `fields` leaves blank (or short of). */
  private blankRequired(fields: string[]): number[] {
    return this.requiredColumns.filter((i) => (fields[i] ?? "").trim() === "");
  }

  /** Reads records in order; a record the parser found broken is reported in its place instead of being read. */
  private async take(firstRow: number, records: string[][], broken: Map<number, Problem[]>): Promise<void> {
    const o = this.o;
    for (let i = 0; i < records.length; i++) {
      const row = firstRow + i;
      const fields = records[i];
      if (this.stopped) return;
      const found = broken.get(row);
      if (found) {
        for (const p of found) this.pending.push(p);
        broken.delete(row);
        continue;
      }
      if (isBlankRecord(fields)) continue;
      const header = this.header;
      if (header && this.refused) {
        this.cells.set(row, fields);
        this.lastRow = row;
      }
      if (!header) {
        const problems = this.readHeader(fields, row);
        if (!this.header) {
          for (const p of problems) this.pending.push(p);
          this.stopped = true; // rows can't be read without their columns
          return;
        }
        continue;
      }
      if (++this.dataRows > this.maxRows) {
        this.fail({ row, msg: `The file has more than ${this.maxRows} contacts`, type: "csv_too_many_rows", ctx: { max_rows: this.maxRows } });
        return;
      }
      const r = readRow(header, fields, row, o.pbx, o.numbers);
      // A separate step after the row's own rules: a number the policy refuses is a row error like a bad one.
      const refused = r.contact && o.destination ? o.destination(r.contact.phone_number) : null;
      const greeting = r.contact?.greeting_override;
      if (refused) {
        this.pending.push({ row, column: header.names[header.phone], msg: refused.message, type: refused.type, input: fields[header.phone], ctx: refused.ctx });
      } else if (greeting?.type === "audio" && o.recordings && !o.recordings.has(greeting.recordingId)) {
        this.pending.push({
          row,
          column: header.names[header.gRecording],
          msg: "No audio greeting of the organization has this id (upload one with POST /api/v1/greeting-recordings)",
          type: "unknown_recording",
          input: greeting.recordingId,
        });
      } else if (r.contact && this.blankRequired(fields).length) {
        for (const i of this.blankRequired(fields)) {
          const name = header.names[i];
          this.pending.push({
            row,
            column: name,
            msg: `The agent uses the template variable {{${name}}} and gives it no default (template_context_variables): an empty value would be spoken as nothing`,
            type: "template_value_empty",
            input: fields[i] ?? "",
          });
        }
      } else if (r.contact) {
        this.batch.push(r.contact);
        for (const f of fields) this.batchChars += f.length;
        if (this.batch.length >= this.chunkRows || this.batchChars >= this.chunkChars) await this.flush();
      } else for (const p of r.problems) this.pending.push(p);
    }
  }

  /** Reads decoded text; `final` marks the end of the file. */
  async feed(text: string, final: boolean): Promise<void> {
    const { firstRow, records, problems } = this.csv.push(text, final);
    const broken = new Map<number, Problem[]>();
    let fatal = false;
    for (const p of problems) {
      broken.set(p.row, [...(broken.get(p.row) ?? []), { row: p.row, msg: p.msg, type: p.type }]);
      fatal ||= p.fatal;
    }
    await this.take(firstRow, records, broken);
    // Problems about text that never became a record (a row that is too long) come after every record read.
    if (!this.stopped) for (const list of broken.values()) for (const p of list) this.pending.push(p);
    if (fatal) this.stopped = true;
  }

  /** The file's bytes stop being UTF-8 at `byteOffset`, inside the record being read (after feeding the text before). */
  failEncoding(byteOffset: number): void {
    if (this.stopped) return;
    const field = this.csv.pendingField;
    const column = this.header ? (this.header.names[field] ?? field + 1) : field + 1;
    this.fail({
      row: this.csv.pendingRow,
      column,
      msg: "The file is not valid UTF-8 text (save it as CSV UTF-8)",
      type: "csv_encoding",
      ctx: { byte_offset: byteOffset },
    });
  }

  /** After the whole file (or a stop): the file-level checks, the last chunk, and the outcome. */
  async finish(): Promise<ImportOutcome> {
    if (!this.stopped) {
      if (!this.header)
        this.pending.push({ row: 1, msg: "The file is empty: it needs a header row with a phone_number column and one row per contact", type: "csv_empty" });
      else if (this.dataRows === 0) this.pending.push({ row: this.headerRow + 1, msg: "The file has no contact rows after the header", type: "csv_no_rows" });
    }
    await this.flush();
    await this.settle();
    const { report, loc } = this;
    // A partial import takes the good rows unless the file itself failed (stopped) or no row was good.
    const partial = this.refused !== null && !this.stopped && this.inserted > 0;
    if (report.total > 0 && !partial) return { ok: false, items: toItems(report.kept, report.total, loc), total: report.total };
    const h = this.header;
    if (!h) throw new Error("unreachable: a file without a header has a problem");

    const missing = this.o.requiredVariables.filter((v) => !h.lower.has(v.toLowerCase()));
    if (missing.length) {
      const problems: Problem[] = missing.map((v) => ({
        row: this.headerRow,
        column: v,
        msg: `The agent uses the template variable {{${v}}}, but the file has no column "${v}"`,
        type: "missing_template_variable",
        ctx: { columns: h.names },
      }));
      return { ok: false, items: toItems(problems, problems.length, loc), total: problems.length };
    }
    const outcome = { ok: true as const, rows: this.dataRows, inserted: this.inserted, columns: h.names };
    return this.refused instanceof RefusedRows ? { ...outcome, refused: this.refused.count ? this.refused.report(h.names) : null } : outcome;
  }
}

export async function importCsv(stream: ReadableStream<Uint8Array>, o: ImportOptions): Promise<ImportOutcome> {
  const imp = new CsvImport(o);
  const utf8 = new Utf8Chunks();
  const reader = stream.getReader();
  try {
    while (!imp.stopped) {
      const { done, value } = await reader.read();
      const decoded = utf8.push(done ? new Uint8Array(0) : value, done);
      if ("invalidAt" in decoded) {
        await imp.feed(decoded.text, false);
        imp.failEncoding(decoded.invalidAt);
        break;
      }
      await imp.feed(decoded.text, done);
      if (done) break;
    }
  } finally {
    if (imp.stopped) await reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
  return imp.finish();
}
