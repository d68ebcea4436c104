// Whether an agent version passed its test suite (issue 40), asked wherever a version is about to be used: a
// campaign's start (src/agent-tests/gate.ts), an inbound number's attachment and each of its calls. Here, below
// telephony and calls, so they may ask; the suite itself is src/agent-tests/.
import { and, desc, eq, inArray, isNull } from "drizzle-orm";
import { agentTestRuns } from "../db/schema";
import type { Db } from "../lib/db";
import type { UsableWorkflow } from "./store";

/**
 * A version's test result: its newest finished whole-suite run's status (`passed` | `failed`), or null when its
 * suite never ran. What `require_passing_tests` asks before a campaign or a number uses the version.
 */
export async function versionTestStatus(db: Db, workflowId: number, versionNumber: number): Promise<"passed" | "failed" | null> {
  const row = await db
    .select({ status: agentTestRuns.status })
    .from(agentTestRuns)
    .where(
      and(
        eq(agentTestRuns.workflowId, workflowId),
        eq(agentTestRuns.versionNumber, versionNumber),
        inArray(agentTestRuns.status, ["passed", "failed"]),
        // A run of one scenario says nothing of the suite.
        isNull(agentTestRuns.scenarioId),
      ),
    )
    .orderBy(desc(agentTestRuns.id))
    .limit(1)
    .get();
  return (row?.status as "passed" | "failed" | undefined) ?? null;
}

/** Who requires passing tests: the agent's own settings, a campaign's setting, an inbound number's attachment. */
export type GateAsker = "agent" | "campaign" | "number";

const ASKERS: Record<GateAsker, string> = {
  agent: "The agent requires passing tests (workflow_configurations.require_passing_tests)",
  campaign: "The campaign requires passing tests (require_passing_tests)",
  number: "The number's agent attachment requires passing tests (require_passing_tests)",
};

/** Why the agent's current version may not be used where `asker` requires passing tests, or null when it passed. */
export async function gateRefusal(db: Db, agent: Pick<UsableWorkflow, "id" | "versionNumber">, asker: GateAsker): Promise<string | null> {
  const status = await versionTestStatus(db, agent.id, agent.versionNumber);
  if (status === "passed") return null;
  const why = status === "failed" ? "failed its newest test suite run" : "has no finished test suite run";
  return `${ASKERS[asker]} and the agent's version ${agent.versionNumber} ${why}: run POST /api/v1/workflow/${agent.id}/tests/runs`;
}
