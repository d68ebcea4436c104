// What the call session asks of the calls module above it, which it may not import: the deployed session class
// (src/calls/call-session.ts) supplies these, so the session's part stays below the calls routes and starters.
import type { CampaignAttempt } from "./store";

export interface CallPorts {
  /** Hangs the run's call up through its carrier (nothing where the call has already ended there). */
  hangup(orgId: number, runId: number): Promise<void>;
  /** Makes the run final (completed) where the carrier's own report of the end will not come. */
  finish(runId: number, durationSeconds: number | null): Promise<void>;
  /** The run's campaign hears the agent's disposition. */
  disposition(campaign: CampaignAttempt, runId: number, disposition: string): Promise<void>;
}
