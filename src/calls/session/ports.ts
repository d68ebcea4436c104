// What the call session asks of the calls module above it, which it may not import: the deployed session class
// (src/calls/call-session.ts) supplies these, so the session's part stays below the calls routes and starters.
import type { TransferRequest } from "../../agent/voice-agent";
import type { CampaignAttempt } from "./store";

/** How a transfer ended: the caller is with the person, nobody answered, or it could not be made. */
export type TransferSettled = "connected" | "no_answer" | "failed";

/**
 * How the carrier took a transfer request: done (cold: the carrier took the caller), ringing the person (warm; the
 * carrier's word on their leg settles it later), or not made (the calling policy, the carrier's refusal) or not
 * offered by the carrier at all. Each is on the run's `transfer` record already.
 */
export type TransferStarted = { state: "connected" } | { state: "ringing"; timeoutSeconds: number } | { state: "failed" | "unsupported"; message: string };

export interface CallPorts {
  /** Hangs the run's call up through its carrier (nothing where the call has already ended there). */
  hangup(orgId: number, runId: number): Promise<void>;
  /** Makes the run final (completed) at once when the session ends the call: the carrier's report may never come. */
  finish(runId: number, durationSeconds: number | null): Promise<void>;
  /** Whether the run has its final status (the session's storage may then go). */
  runFinal(runId: number): Promise<boolean>;
  /** The run's campaign hears the agent's disposition and its answering-machine class (either may be null). */
  disposition(campaign: CampaignAttempt, runId: number, disposition: string | null, amdClass: string | null): Promise<void>;
  /** Presses keys with the carrier's DTMF command: false where the carrier has none (the session plays tones). */
  sendDtmf(orgId: number, runId: number, digits: string): Promise<boolean>;
  /** Hands the call to a person through its carrier (the destination checked against the calling policy first). */
  transfer(orgId: number, runId: number, request: TransferRequest): Promise<TransferStarted>;
  /** A warm transfer given up (no word in time, the call ended): the person's leg is hung up, the run says why. */
  transferGiveUp(orgId: number, runId: number, outcome: "no_answer" | "failed", message: string): Promise<void>;
}
