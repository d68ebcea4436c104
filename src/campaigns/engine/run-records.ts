// What the object reads of the calls' run records in D1: after a restart, whether an attempt left `dialing` reached
// the carrier (architecture: when in doubt, don't dial).
import { and, desc, eq } from "drizzle-orm";
import { workflowRuns } from "../../db/schema";
import { getDb } from "../../lib/db";

export type AttemptRun = { id: number; status: string; provider_call_id: string | null };

/** The newest run of one attempt, or null when there is none or D1 cannot say. */
export async function runOfAttempt(env: Env, campaignId: number, contactId: number, attempt: number): Promise<AttemptRun | null> {
  try {
    const run = await getDb(env)
      .select({ id: workflowRuns.id, status: workflowRuns.status, provider_call_id: workflowRuns.providerCallId })
      .from(workflowRuns)
      .where(and(eq(workflowRuns.campaignId, campaignId), eq(workflowRuns.contactId, contactId), eq(workflowRuns.attempt, attempt)))
      .orderBy(desc(workflowRuns.id))
      .limit(1)
      .get();
    return run ?? null;
  } catch {
    return null;
  }
}
