// Streams a CSV from its bytes to the campaign's storage: decode (strict UTF-8), parse (papaparse), check every row
// (contacts.ts), and hand valid contacts to the sink in chunks while later rows are still being read. Memory stays
// flat: one text chunk, one contact chunk in flight, one being filled, and at most `maxItems` problems.
// Duplicates are judged by the sink (the campaign object holds every number already imported).
import type { ValidationItem } from "../../lib/errors";
import type { NumberReading } from "../../telephony/numbers";
import type { ContactInput } from "../object-api";
import { isBlankRecord, MAX_ROWS, PHONE, readHeader, readRow, type Header, type Problem } from "./contacts";
import { CsvRecords } from "./records";
import { Utf8Chunks } from "./utf8";

export type ImportSink = {
  importContacts(chunk: ContactInput[]): Promise<{ inserted: number; duplicates: { row: number; phone_number: string; first_row: number }[] }>;
};

export type ImportOptions = {
  pbx: boolean;
  /** How a national number is read: the campaign's default_country, else the country suggested in its error. */
  numbers?: NumberReading;
  /** Template variables the agent uses: each must be a column (checked after the rows, in the order create checks). */
  requiredVariables: string[];
  sink: ImportSink;
  /** Contacts per sink call at most. */
  chunkRows?: number;
  /** Characters of cell text per sink call at most (bounds a chunk of wide rows). */
  chunkChars?: number;
  /** Problems reported (the total is counted regardless). */
  maxItems?: number;
  /** Contacts allowed in one file. */
  maxRows?: number;
  /** Where the file is named in the request: loc prefix of every item. */
  loc?: (string | number)[];
  /** The organization's destination policy, judged on each valid number (null = may be dialed). */
  destination?: (phoneNumber: string) => { message: string; type: string; ctx?: Record<string, unknown> } | null;
  /** The organization's audio greetings: a contact's greeting_override_recording_id must name one. */
  recordings?: ReadonlySet<string>;
};

export type ImportOutcome = { ok: true; rows: number; inserted: number; columns: string[] } | { ok: false; items: ValidationItem[]; total: number };

/** The first `max` problems in row order, and how many there were in all. */
class ProblemReport {
  readonly kept: Problem[] = [];
  total = 0;
  constructor(private readonly max: number) {}

  /** Adds problems of rows after every row already added (sorted among themselves here). */
  addSorted(problems: Problem[]): void {
    if (!problems.length) return;
    this.total += problems.length;
    if (this.kept.length >= this.max) return;
    problems.sort((a, b) => a.row - b.row);
    for (const p of problems) {
      if (this.kept.length >= this.max) break;
      this.kept.push(p);
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

export async function importCsv(stream: ReadableStream<Uint8Array>, o: ImportOptions): Promise<ImportOutcome> {
  // Big chunks: each call to the campaign object costs a transaction whose price grows with the table, so fewer
  // calls import much faster (measured in bench/csv-import); the character bound keeps a chunk to a few MB.
  const chunkRows = o.chunkRows ?? 25_000;
  const chunkChars = o.chunkChars ?? 4 * 1024 * 1024;
  const maxRows = o.maxRows ?? MAX_ROWS;
  const loc = o.loc ?? ["body", "source_url"];
  const report = new ProblemReport(o.maxItems ?? 100);
  const utf8 = new Utf8Chunks();
  const csv = new CsvRecords();

  let header = null as Header | null; // (assigned in closures: no narrowing to null)
  let headerRow = 0;
  let dataRows = 0;
  let inserted = 0;
  let stopped = false;
  // Contacts being filled, and problems of the same rows: they are reported together, in row order,
  // once the sink has judged the chunk's duplicates.
  let batch: ContactInput[] = [];
  let batchChars = 0;
  let pending: Problem[] = [];
  let inFlight: Promise<Problem[]> | null = null;

  const send = (contacts: ContactInput[], problems: Problem[]): Promise<Problem[]> =>
    contacts.length === 0
      ? Promise.resolve(problems)
      : o.sink.importContacts(contacts).then((res) => {
          inserted += res.inserted;
          const phoneColumn = header ? header.names[header.phone] : PHONE;
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
          return problems;
        });

  /** Hands the current chunk to the sink, after the previous one has been judged (one in flight at a time). */
  const flush = async () => {
    const previous = inFlight;
    inFlight = send(batch, pending);
    batch = [];
    batchChars = 0;
    pending = [];
    if (previous) report.addSorted(await previous);
  };
  const fail = (p: Problem) => {
    pending.push(p);
    stopped = true;
  };

  /** Reads records in order; a record the parser found broken is reported in its place instead of being read. */
  const take = async (records: { row: number; fields: string[] }[], broken: Map<number, Problem[]>) => {
    for (const { row, fields } of records) {
      if (stopped) return;
      const found = broken.get(row);
      if (found) {
        for (const p of found) pending.push(p);
        broken.delete(row);
        continue;
      }
      if (isBlankRecord(fields)) continue;
      if (!header) {
        const h = readHeader(fields, row, o.pbx);
        if (!h.header) {
          for (const p of h.problems) pending.push(p);
          stopped = true; // rows can't be read without their columns
          return;
        }
        header = h.header;
        headerRow = row;
        continue;
      }
      if (++dataRows > maxRows) {
        fail({ row, msg: `The file has more than ${maxRows} contacts`, type: "csv_too_many_rows", ctx: { max_rows: maxRows } });
        return;
      }
      const r = readRow(header, fields, row, o.pbx, o.numbers);
      // A separate step after the row's own rules: a number the policy refuses is a row error like a bad one.
      const refused = r.contact && o.destination ? o.destination(r.contact.phone_number) : null;
      const greeting = r.contact?.greeting_override;
      if (refused) {
        pending.push({ row, column: header.names[header.phone], msg: refused.message, type: refused.type, input: fields[header.phone], ctx: refused.ctx });
      } else if (greeting?.type === "audio" && o.recordings && !o.recordings.has(greeting.recordingId)) {
        pending.push({
          row,
          column: header.names[header.gRecording],
          msg: "No audio greeting of the organization has this id (upload one with POST /api/v1/greeting-recordings)",
          type: "unknown_recording",
          input: greeting.recordingId,
        });
      } else if (r.contact) {
        batch.push(r.contact);
        for (const f of fields) batchChars += f.length;
        if (batch.length >= chunkRows || batchChars >= chunkChars) await flush();
      } else for (const p of r.problems) pending.push(p);
    }
  };

  const feed = async (text: string, final: boolean) => {
    const { records, problems } = csv.push(text, final);
    const broken = new Map<number, Problem[]>();
    let fatal = false;
    for (const p of problems) {
      broken.set(p.row, [...(broken.get(p.row) ?? []), { row: p.row, msg: p.msg, type: p.type }]);
      fatal ||= p.fatal;
    }
    await take(records, broken);
    // Problems about text that never became a record (a row that is too long) come after every record read.
    if (!stopped) for (const list of broken.values()) for (const p of list) pending.push(p);
    if (fatal) stopped = true;
  };

  const reader = stream.getReader();
  try {
    while (!stopped) {
      const { done, value } = await reader.read();
      const decoded = utf8.push(done ? new Uint8Array(0) : value, done);
      if ("invalidAt" in decoded) {
        await feed(decoded.text, false);
        if (!stopped) {
          const field = csv.pendingField;
          const column = header ? (header.names[field] ?? field + 1) : field + 1;
          fail({
            row: csv.pendingRow,
            column,
            msg: "The file is not valid UTF-8 text (save it as CSV UTF-8)",
            type: "csv_encoding",
            ctx: { byte_offset: decoded.invalidAt },
          });
        }
        break;
      }
      await feed(decoded.text, done);
      if (done) break;
    }
  } finally {
    if (stopped) await reader.cancel().catch(() => {});
    else reader.releaseLock();
  }

  if (!stopped) {
    if (!header)
      pending.push({ row: 1, msg: "The file is empty: it needs a header row with a phone_number column and one row per contact", type: "csv_empty" });
    else if (dataRows === 0) pending.push({ row: headerRow + 1, msg: "The file has no contact rows after the header", type: "csv_no_rows" });
  }
  await flush();
  report.addSorted(await inFlight!);

  if (report.total > 0) return { ok: false, items: toItems(report.kept, report.total, loc), total: report.total };
  const h = header as Header | null;
  if (!h) throw new Error("unreachable: a file without a header has a problem");

  const missing = o.requiredVariables.filter((v) => !h.lower.has(v.toLowerCase()));
  if (missing.length) {
    const problems: Problem[] = missing.map((v) => ({
      row: headerRow,
      column: v,
      msg: `The agent uses the template variable {{${v}}}, but the file has no column "${v}"`,
      type: "missing_template_variable",
      ctx: { columns: h.names },
    }));
    return { ok: false, items: toItems(problems, problems.length, loc), total: problems.length };
  }
  return { ok: true, rows: dataRows, inserted, columns: h.names };
}
