// Whether an attempt's answered call was a conversation (issue 39: answered calls nobody spoke on read "Reached"). The
// calls module says so with the final status (CampaignCallStatus.conversation, from the run's record); the contact's
// outcome is then `answered_no_conversation` instead of `completed`, counted apart by the counters' triggers. When the
// carrier's final status came before the call session wrote what it heard, the session's own final status follows
// with it, for an attempt already closed: it is kept then (once), and the contact's outcome corrected.
import type { CampaignCallStatus } from "../../calls/campaign/campaign-calls";
import type { DoSql } from "../../lib/do-sql";
import type { AttemptRow } from "./attempts";
import { ANSWERED_NO_CONVERSATION } from "./outcomes";

/** Migration v6's first statement: each attempt's conversation (1, 0; null: not known). */
export const ATTEMPT_CONVERSATION = `ALTER TABLE attempts ADD COLUMN conversation INTEGER`;

const bit = (v: boolean | null | undefined) => (v == null ? null : v ? 1 : 0);

/** Stores what the final status says of the conversation on attempts closing now (their ids with the statuses). */
export function keepConversations(db: DoSql, closing: { id: number; conversation?: boolean | null }[]): void {
  for (const x of closing) {
    const v = bit(x.conversation);
    if (v !== null) db.run`UPDATE attempts SET conversation = ${v} WHERE id = ${x.id}`;
  }
}

/**
 * A conversation learned after the attempt closed (its call completed without one known): kept once, and a contact
 * whose outcome came from this attempt becomes `answered_no_conversation` when nobody spoke. True when it changed anything.
 */
export function lateConversation(db: DoSql, a: AttemptRow, st: CampaignCallStatus): boolean {
  const v = bit(st.conversation);
  if (v === null || a.status !== "completed" || a.conversation != null) return false;
  if (!db.run`UPDATE attempts SET conversation = ${v} WHERE id = ${a.id} AND conversation IS NULL`) return false;
  a.conversation = v;
  if (v === 0)
    db.run`UPDATE contacts SET outcome = ${ANSWERED_NO_CONVERSATION}
      WHERE id = ${a.contact_id} AND attempts = ${a.attempt} AND status = 'done' AND outcome = 'completed'`;
  return true;
}
