// Contacts packed for the campaign object's multi-row INSERT: JSON arrays of [row, phone_number, initial_context,
// greeting_override or null], each bound to one statement, where SQLite's `->>` turns the two objects back into
// JSON text. The Worker packs a chunk before the RPC: a few strings cross the boundary instead of 25,000 objects
// cloned on both sides, and the object does no per-contact work in JavaScript. Each object is serialized once, as
// part of its array (not stringified first and then escaped again inside it).
import type { ContactInput } from "./object-api";

export type PackedContacts = { rows: number; json: string }[];

/** Characters of cell text per part: keeps each bound JSON string below SQLite's string size limit (2 MB in a
 *  Durable Object) whatever the rows hold: a row is at most 64K characters, and JSON escapes one in at most 6. */
const PART_CHARS = 128 * 1024;

export function packContacts(chunk: readonly ContactInput[]): PackedContacts {
  const parts: PackedContacts = [];
  let part: [number, string, Record<string, string>, unknown][] = [];
  let chars = 0;
  const flush = () => {
    if (part.length) parts.push({ rows: part.length, json: JSON.stringify(part) });
    part = [];
    chars = 0;
  };
  for (const ct of chunk) {
    const context = ct.initial_context ?? {};
    part.push([ct.row, ct.phone_number, context, ct.greeting_override ?? null]);
    // The text the row adds, but for JSON's punctuation and escapes (at most 6 characters for 1).
    chars += ct.phone_number.length + 8;
    for (const k in context) chars += k.length + context[k].length + 6;
    if (chars >= PART_CHARS) flush();
  }
  flush();
  return parts;
}
