// The pure rules of a dispatch round: how many contacts it may take, the lease each attempt holds, and what the
// organization's answers make of the contacts picked.
import { MAX_CALL_SECONDS, TIMEOUT_GRACE_SECONDS } from "../../calls/campaign/call-length";
import type { LeaseResult } from "../../organizations/leases";
import type { CallingRules } from "../../telephony/calling-rules";

/** When the organization refuses a lease and no wake-up comes, ask again after this long. */
export const ORG_RETRY_FALLBACK_MS = 5000;
/** Dials started per dispatch round at most (one organization RPC takes the round's leases). */
export const MAX_ROUND = 100;
/** A call with no final status by then is given up as `unknown` (its attempt's timeout). */
export const CALL_TIMEOUT_MS = (MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS) * 1000;
/** A lease outlives its call's timeout, so it is released by the attempt's end rather than by expiry. */
export const LEASE_TTL_SECONDS = MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS + 60;

/** The organization lease of one attempt; the calls module sees it in CampaignCallRequest.leaseId. */
export const leaseIdFor = (campaignId: number, contactId: number, attempt: number) => `campaign:${campaignId}:${contactId}:${attempt}`;

/** The attempt cap the organization applies to each number dialed (null: none). */
export const attemptCapOf = (rules: CallingRules) =>
  rules.attemptCap.enabled ? { max: rules.attemptCap.max_attempts, windowMs: rules.attemptCap.window_hours * 3_600_000 } : null;

/** What a round asks for when the organization cannot be asked: nothing granted, ask again a little later. */
export const unanswered = (n: number): LeaseResult[] =>
  Array.from({ length: n }, () => ({ granted: false, inUse: -1, cap: -1, retryAfterSeconds: ORG_RETRY_FALLBACK_MS / 1000 }));

export type Picked = { id: number; attempts: number; phone_number: string };

/**
 * The organization's answers for a round's picks (same order): the contacts to dial, the leases granted but not
 * used (the campaign stopped, or the slots or the pace ran out meanwhile), the dials a calling rule skipped, and a
 * refusal (the organization's cap), if any. `room` and `budget`: the slots and starts left now.
 */
export function sortAnswers<P extends Picked>(
  picks: P[],
  answers: LeaseResult[],
  leaseIds: string[],
  now: { go: boolean; room: number; budget: number },
): { chosen: { contactId: number; leaseId: string }[]; unused: string[]; skipped: { contact: P; lease: LeaseResult }[]; refused: LeaseResult | null } {
  let { room, budget } = now;
  let refused: LeaseResult | null = null;
  const chosen: { contactId: number; leaseId: string }[] = [];
  const unused: string[] = [];
  const skipped: { contact: P; lease: LeaseResult }[] = [];
  picks.forEach((p, i) => {
    if (answers[i].skip) skipped.push({ contact: p, lease: answers[i] });
    else if (!answers[i].granted) refused = answers[i];
    else if (!now.go || room <= 0 || budget <= 0) unused.push(leaseIds[i]);
    else {
      chosen.push({ contactId: p.id, leaseId: leaseIds[i] });
      room--;
      budget--;
    }
  });
  return { chosen, unused, skipped, refused };
}
