// Erasing one phone number from the campaign (an erasure request, privacy/erasure.ts): its contact row, its attempts,
// its retry timer, a staged append row, a row a background import left out, and the number in the campaign's log (replaced, so the log keeps what
// happened). Refused while a call to the number is live: its attempt must still receive the final status.
import type { CampaignCore } from "./core";

export type EraseResult =
  /** The object holds no campaign. */
  | { erased: false; reason: "no_campaign" }
  /** A call to the number is dialing or in flight: nothing was removed. */
  | { erased: false; reason: "live" }
  | { erased: true; contacts: number; attempts: number; runIds: number[] };

/** What stands for an erased number in the campaign's log. */
export const ERASED_NUMBER = "[erased number]";

export function eraseNumber(core: CampaignCore, number: string): EraseResult {
  if (!core.campaign()) return { erased: false, reason: "no_campaign" };
  const db = core.db;
  const result = db.tx((): EraseResult => {
    const contact = db.one<{ id: number; status: string }>`SELECT id, status FROM contacts WHERE phone_number = ${number}`;
    if (contact) {
      const open = db.value<number>`SELECT count(*) FROM attempts WHERE contact_id = ${contact.id} AND status IN ('dialing', 'in_flight')`;
      if (contact.status === "active" || (open ?? 0) > 0) return { erased: false, reason: "live" };
    }
    const runIds = contact
      ? db.all<{ run_id: number }>`SELECT run_id FROM attempts WHERE contact_id = ${contact.id} AND run_id IS NOT NULL`.map((r) => r.run_id)
      : [];
    const attempts = contact ? db.changes`DELETE FROM attempts WHERE contact_id = ${contact.id}` : 0;
    const contacts = contact ? db.changes`DELETE FROM contacts WHERE id = ${contact.id}` : 0;
    if (contact) db.run`DELETE FROM timers WHERE kind IN ('retry', 'cap_wait') AND ref = ${contact.id}`;
    db.run`DELETE FROM staged_contacts WHERE phone_number = ${number}`;
    // A row a partial import left out, as the file wrote the number (E.164 there, or its digits as dialed).
    db.run`DELETE FROM refused_rows WHERE instr(fields, ${number}) > 0 OR instr(fields, ${number.replace(/^\+/, "")}) > 0`;
    db.run`UPDATE logs SET message = replace(message, ${number}, ${ERASED_NUMBER}), details = replace(details, ${number}, ${ERASED_NUMBER})
      WHERE instr(message, ${number}) > 0 OR instr(details, ${number}) > 0`;
    if (contacts) core.markDirty();
    return { erased: true, contacts, attempts, runIds };
  });
  return result;
}
