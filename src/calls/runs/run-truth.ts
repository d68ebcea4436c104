// What a run's record may say of its call, checked against what the call really was (pure, unit-tested): a run a
// person talked on is not voicemail, and its end is never before its answer.
import type { CallStatus } from "../../telephony/providers/types";
import type { RunRow } from "./runs";

/** The call session's own machine verdict (machineOnRun): it judged the callee's first words, so it stands. */
export const SESSION_MACHINE = "machine_detected";

/**
 * Whether a voicemail end is really a conversation: the run was answered, no machine verdict of the session's own
 * stands, and its session heard the callee speak. A carrier's AMD verdict that came late (Telnyx reports it after
 * call.answered) or only with the final status is then wrong: a person talked with the agent.
 */
export function mayBePerson(run: Pick<RunRow, "status" | "answeredAt" | "answeredBy">, status: CallStatus): boolean {
  return status === "voicemail" && (run.answeredAt != null || run.status === "in_progress") && run.answeredBy !== SESSION_MACHINE;
}

/** The latest of ISO instants (null ignored): an end is never before the answer a coarser clock may follow. */
export function latestOf(first: string, ...more: (string | null | undefined)[]): string {
  return more.reduce<string>((a, b) => (b && Date.parse(b) > Date.parse(a) ? b : a), first);
}
