// Contract 6's CSV rules for one header and one row at a time (pure): what a row becomes as a contact, or which
// cells are wrong. Phone numbers follow the configuration's family (E.164 for carriers; ari also extensions,
// SIP URIs and dial strings). Cell text is stored as text: a formula-like cell is never evaluated.
import { MAX_CONTEXT_BYTES, MAX_CONTEXT_KEYS, jsonBytes } from "../../lib/context-limits";
import { isValidTimeZone } from "../../lib/time-zones";
import { normalizeNumber, readDialable, type NumberReading } from "../../telephony/numbers";
import { extractVariables } from "../../workflows/template";
import type { ContactInput } from "../engine/object-api";
import type { Problem } from "../engine/types";
import type { GreetingOverride } from "../../calls/campaign/campaign-calls";

/** Characters of one contact's cells together; a longer row would bloat every call's context. */
export const MAX_ROW_CHARS = 64 * 1024;

export const PHONE = "phone_number";
export const G_TYPE = "greeting_override_type";
export const G_TEXT = "greeting_override_text";
export const G_RECORDING = "greeting_override_recording_id";
/** A contact's own IANA time zone: the calling rules' local hours follow it instead of the number's. */
export const TIMEZONE = "timezone";
const GREETING_COLUMNS = new Set([G_TYPE, G_TEXT, G_RECORDING]);

export type Header = {
  /** Names as written (trimmed), by position. */
  names: string[];
  /** Lowercased names, for case-insensitive lookups. */
  lower: Set<string>;
  phone: number;
  gType: number;
  gText: number;
  gRecording: number;
  timezone: number;
  /** Columns that become initial_context: every one but phone_number and the greeting override columns. */
  context: { index: number; name: string }[];
  /** At most the JSON bytes the context's keys and punctuation take (every character escaped), for a cheap upper bound. */
  contextNameBytes: number;
};

const isBlank = (fields: string[]) => fields.every((f) => f.trim() === "");

/** True for a record that is an empty line (or only separators): skipped, though it keeps its row number. */
export function isBlankRecord(fields: string[]): boolean {
  return (fields.length === 1 && fields[0] === "") || isBlank(fields);
}

/** Reads the header row: names trimmed, compared case-insensitively; `phone_number` required; no duplicates. */
export function readHeader(fields: string[], row: number, pbx: boolean): { header: Header | null; problems: Problem[] } {
  const names = fields.map((f) => f.trim());
  const problems: Problem[] = [];
  const seen = new Map<string, number>();
  names.forEach((name, i) => {
    if (name === "") {
      problems.push({ row, column: i + 1, msg: `Column ${i + 1} has no name in the header row`, type: "csv_header_empty" });
      return;
    }
    const key = name.toLowerCase();
    if (seen.has(key)) {
      problems.push({
        row,
        column: name,
        msg: `Column "${name}" appears more than once in the header row (names are compared case-insensitively)`,
        type: "csv_header_duplicate",
        ctx: { first_position: seen.get(key)! + 1 },
      });
    } else seen.set(key, i);
  });
  const phone = seen.get(PHONE) ?? -1;
  if (phone < 0) {
    // A first row that holds a number is data, not a header: say so, it is the usual mistake.
    const looksLikeData = names.some((n) => normalizeNumber(n, pbx).ok);
    problems.push({
      row,
      column: PHONE,
      msg: looksLikeData
        ? "The first row looks like data: the file needs a header row naming its columns, with a phone_number column"
        : "Column phone_number is required in the header row",
      type: "missing",
      ctx: { columns: names },
    });
  }
  const tz = seen.get(TIMEZONE) ?? -1;
  // The time zone column is kept under its canonical name, where the calling rules look for it, whatever its case.
  const context = names.flatMap((name, index) =>
    index === phone || GREETING_COLUMNS.has(name.toLowerCase()) ? [] : [{ index, name: index === tz ? TIMEZONE : name }],
  );
  // Every contact's initial_context has one key per such column: the single-call cap holds per file.
  if (context.length > MAX_CONTEXT_KEYS) {
    problems.push({
      row,
      msg: `The file has ${context.length} columns for initial_context; at most ${MAX_CONTEXT_KEYS} (besides phone_number and the greeting override columns)`,
      type: "csv_too_many_columns",
      ctx: { max_columns: MAX_CONTEXT_KEYS },
    });
  }
  if (problems.length) return { header: null, problems };
  return {
    header: {
      names,
      lower: new Set(seen.keys()),
      phone,
      gType: seen.get(G_TYPE) ?? -1,
      gText: seen.get(G_TEXT) ?? -1,
      gRecording: seen.get(G_RECORDING) ?? -1,
      timezone: tz,
      context,
      contextNameBytes: context.reduce((n, c) => n + c.name.length * 6 + 4, 2),
    },
    problems,
  };
}

/** Template variables of `text` that are not columns of the file. */
export function unknownVariables(text: string, h: Header): string[] {
  return extractVariables(text).filter((v) => !h.lower.has(v.toLowerCase()));
}

/** Zones already judged: a million rows name a handful, and the runtime's check builds a formatter. */
const zoneChecks = new Map<string, boolean>();
function validZone(tz: string): boolean {
  let ok = zoneChecks.get(tz);
  if (ok === undefined) {
    ok = isValidTimeZone(tz);
    if (zoneChecks.size < 1000) zoneChecks.set(tz, ok);
  }
  return ok;
}

/** Cell `i` trimmed ("" for a column the row does not reach, or none). */
const cellOf = (fields: string[], i: number) => (i >= 0 && i < fields.length ? fields[i].trim() : "");

/** No problems: shared, never written (a clean row allocates no list). */
const NONE: readonly Problem[] = Object.freeze([]);

/** `list` with `p` added (a new list when there was none). */
function withProblem(list: Problem[] | null, p: Problem): Problem[] {
  if (!list) return [p];
  list.push(p);
  return list;
}

/** The problem of an empty cell a greeting type needs. */
function missingFor(h: Header, row: number, type: string, i: number, name: string): Problem {
  return { row, column: i >= 0 ? h.names[i] : name, msg: `${name} is required when greeting_override_type is ${type}`, type: "missing" };
}

/**
 * One data row: the contact it becomes, or its problems (each about one cell). Called for every row of an import,
 * so a clean row allocates only its contact (no closures, no problem list).
 */
export function readRow(
  h: Header,
  fields: string[],
  row: number,
  pbx: boolean,
  how: NumberReading = {},
): { contact: ContactInput | null; problems: readonly Problem[] } {
  let problems: Problem[] | null = null;
  if (fields.length > h.names.length) {
    const extra = fields.slice(h.names.length).findIndex((f) => f.trim() !== "");
    // Trailing empty cells (a spreadsheet's stray commas) are harmless; a value without a column is not.
    if (extra >= 0) {
      problems = withProblem(problems, {
        row,
        column: h.names.length + extra + 1,
        msg: `Row has ${fields.length} values but the header names ${h.names.length} columns`,
        type: "csv_too_many_values",
        input: fields[h.names.length + extra],
      });
    }
  }
  let chars = 0;
  for (let i = 0; i < fields.length; i++) chars += fields[i].length;
  if (chars > MAX_ROW_CHARS) {
    problems = withProblem(problems, { row, msg: `Row is longer than ${MAX_ROW_CHARS} characters`, type: "csv_row_too_long" });
    return { contact: null, problems };
  }

  const rawPhone = fields[h.phone] ?? "";
  const phone = readDialable(rawPhone, pbx, how);
  if (!phone.ok) {
    const ctx = "ctx" in phone ? phone.ctx : undefined;
    problems = withProblem(problems, {
      row,
      column: h.names[h.phone],
      msg: phone.message,
      type: "phone_number_invalid",
      input: rawPhone,
      ...(ctx ? { ctx } : {}),
    });
  }

  if (h.timezone >= 0) {
    const tz = cellOf(fields, h.timezone);
    if (tz && !validZone(tz)) {
      problems = withProblem(problems, {
        row,
        column: h.names[h.timezone],
        msg: `Unknown time zone "${tz}": use an IANA name such as America/New_York, or leave it empty for the number's own`,
        type: "timezone_invalid",
        input: tz,
      });
    }
  }

  let greeting: GreetingOverride = null;
  const gType = h.gType >= 0 ? cellOf(fields, h.gType).toLowerCase() : "";
  if (gType === "text") {
    const text = cellOf(fields, h.gText);
    if (!text) problems = withProblem(problems, missingFor(h, row, "text", h.gText, G_TEXT));
    else {
      const unknown = unknownVariables(text, h);
      if (unknown.length) {
        problems = withProblem(problems, {
          row,
          column: h.names[h.gText],
          msg: `Unknown template variable${unknown.length > 1 ? "s" : ""} ${unknown.map((v) => `{{${v}}}`).join(", ")}: not a column of the file`,
          type: "unknown_template_variable",
          input: text,
          ctx: { variables: unknown },
        });
      } else greeting = { type: "text", text };
    }
  } else if (gType === "audio") {
    const id = cellOf(fields, h.gRecording);
    if (!id) problems = withProblem(problems, missingFor(h, row, "audio", h.gRecording, G_RECORDING));
    else greeting = { type: "audio", recordingId: id };
  } else if (gType !== "") {
    problems = withProblem(problems, {
      row,
      column: h.names[h.gType],
      msg: "greeting_override_type must be text, audio or empty",
      type: "enum",
      input: fields[h.gType],
      ctx: { expected: ["text", "audio", ""] },
    });
  }

  if (problems || !phone.ok) return { contact: null, problems: problems ?? NONE };
  const initial_context: Record<string, string> = {};
  let bound = h.contextNameBytes;
  for (const c of h.context) {
    const v = cellOf(fields, c.index);
    initial_context[c.name] = v;
    // JSON escapes make a character at most 6 bytes: only a row that might pass the cap is measured exactly.
    bound += v.length * 6;
  }
  if (bound > MAX_CONTEXT_BYTES && jsonBytes(initial_context) > MAX_CONTEXT_BYTES) {
    return {
      contact: null,
      problems: [
        {
          row,
          msg: `The row's initial_context (every column but phone_number and the greeting override) is over ${MAX_CONTEXT_BYTES} bytes as JSON, the cap of a call's context`,
          type: "csv_context_too_large",
          ctx: { max_bytes: MAX_CONTEXT_BYTES },
        },
      ],
    };
  }
  return { contact: { row, phone_number: phone.value, initial_context, greeting_override: greeting }, problems: NONE };
}
