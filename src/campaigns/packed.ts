// Contacts packed for the campaign object's multi-row INSERT: JSON arrays of [row, phone_number, initial_context as
// JSON text, greeting_override as JSON text or null], each bound to one statement. The Worker packs a chunk before
// the RPC: a few strings cross the boundary instead of 25,000 objects cloned on both sides, and the object does no
// per-contact work in JavaScript.
import type { ContactInput } from "./object-api";

export type PackedContacts = { rows: number; json: string }[];

/** Characters of cell text per part: keeps each bound JSON string far below SQLite's string size limit, whatever
 *  the rows hold (a row is at most 64K characters). */
const PART_CHARS = 128 * 1024;

export function packContacts(chunk: readonly ContactInput[]): PackedContacts {
  const parts: PackedContacts = [];
  let part: [number, string, string, string | null][] = [];
  let chars = 0;
  const flush = () => {
    if (part.length) parts.push({ rows: part.length, json: JSON.stringify(part) });
    part = [];
    chars = 0;
  };
  for (const ct of chunk) {
    const context = JSON.stringify(ct.initial_context ?? {});
    part.push([ct.row, ct.phone_number, context, ct.greeting_override ? JSON.stringify(ct.greeting_override) : null]);
    chars += context.length + ct.phone_number.length;
    if (chars >= PART_CHARS) flush();
  }
  flush();
  return parts;
}
