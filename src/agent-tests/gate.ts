// The release gate: an agent whose settings say `require_passing_tests: true` takes a campaign's start (or resume)
// only when its current version passed its newest finished suite run (src/agent-tests/suite.ts versionTestStatus).
import type { Db } from "../lib/db";
import { conflict } from "../lib/errors";
import type { UsableWorkflow } from "../workflows/store";
import { versionTestStatus } from "./suite";

export const requiresPassingTests = (agent: UsableWorkflow) =>
  (agent.workflowConfigurations as { require_passing_tests?: unknown } | null)?.require_passing_tests === true;

/** 409 naming why, where the agent requires passing tests and its current version has not passed. */
export async function requirePassingTests(db: Db, agent: UsableWorkflow): Promise<void> {
  if (!requiresPassingTests(agent)) return;
  const status = await versionTestStatus(db, agent.id, agent.versionNumber);
  if (status === "passed") return;
  const why = status === "failed" ? "failed its newest test suite run" : "has no finished test suite run";
  throw conflict(
    `The agent requires passing tests (workflow_configurations.require_passing_tests) and its version ${agent.versionNumber} ${why}: run POST /api/v1/workflow/${agent.id}/tests/runs`,
  );
}
