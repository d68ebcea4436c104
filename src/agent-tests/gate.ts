// The release gate at a campaign's start (or resume): the agent's version must have passed its newest finished suite
// run where the agent's settings (`workflow_configurations.require_passing_tests: true`) or the campaign's own
// `require_passing_tests` setting ask for it (src/workflows/test-gate.ts answers; inbound numbers ask it too).
import type { Db } from "../lib/db";
import { conflict } from "../lib/errors";
import type { UsableWorkflow } from "../workflows/store";
import { gateRefusal } from "../workflows/test-gate";

export const requiresPassingTests = (agent: UsableWorkflow) =>
  (agent.workflowConfigurations as { require_passing_tests?: unknown } | null)?.require_passing_tests === true;

/** 409 naming why, where the agent or the campaign (`campaignRequires`) requires passing tests and its version has not passed. */
export async function requirePassingTests(db: Db, agent: UsableWorkflow, campaignRequires = false): Promise<void> {
  const asker = requiresPassingTests(agent) ? "agent" : campaignRequires ? "campaign" : null;
  const why = asker ? await gateRefusal(db, agent, asker) : null;
  if (why) throw conflict(why);
}
