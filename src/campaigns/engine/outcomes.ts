// Call statuses as the engine sees them: which are final, which count as failed calls, which succeed.
import type { CallStatus } from "../../telephony/providers/types";

export const FINAL_STATUSES: ReadonlySet<CallStatus> = new Set(["completed", "busy", "no_answer", "voicemail", "declined", "failed", "canceled", "unknown"]);

/** Attempts that count in `failed_calls`: every final status except completed and canceled. */
export const FAILED_CALL_STATUSES: ReadonlySet<CallStatus> = new Set(["busy", "no_answer", "voicemail", "declined", "failed", "unknown"]);

/** Order of the non-final statuses, so a late one never moves an attempt backwards. */
export const PROGRESS_ORDER: Readonly<Record<string, number>> = { queued: 0, initiated: 1, ringing: 2, in_progress: 3 };

export const isFinalStatus = (s: string): s is CallStatus => FINAL_STATUSES.has(s as CallStatus);
/**
 * A contact's outcome when its call was answered (`completed`) but no conversation took place: the callee said nothing
 * the agent understood (issue 39). The attempt keeps the call's status; only the contact's outcome says this.
 */
export const ANSWERED_NO_CONVERSATION = "answered_no_conversation";

/** The contact's outcome for an attempt's final call status and whether its session heard a conversation (null: unknown). */
export const contactOutcome = (status: string, conversation: boolean | null | undefined): string =>
  status === "completed" && conversation === false ? ANSWERED_NO_CONVERSATION : status;

export const isSuccess = (s: string | null) => s === "completed";
/** Contract 6: a breaker failure is a carrier refusal or a final `failed` (a refusal is recorded as `failed`). */
export const isBreakerFailure = (s: string) => s === "failed";

/** Default outcomes a redial picks up. */
export const DEFAULT_REDIAL_OUTCOMES: readonly CallStatus[] = ["busy", "no_answer", "voicemail"];
