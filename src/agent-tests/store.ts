// The agent's test scenarios in D1: one row each, its body as validated, stamped with the agent's version when it was
// last saved and a revision bumped on every change. Everything is scoped by organization: another's agent is a 404.
import { and, asc, count, eq } from "drizzle-orm";
import { agentTestScenarios } from "../db/schema";
import { isoNow } from "../lib/clock";
import { isUniqueViolation, type Db } from "../lib/db";
import { invalid, notFound } from "../lib/errors";
import { getWorkflow } from "../workflows/store";
import { MAX_SCENARIOS_PER_AGENT, type Scenario, type ScenarioInput } from "./schemas";

type Row = typeof agentTestScenarios.$inferSelect;

export function scenarioView(r: Row): Scenario {
  return {
    ...(r.spec as ScenarioInput),
    name: r.name,
    id: r.id,
    workflow_id: r.workflowId,
    revision: r.revision,
    agent_version: r.agentVersion,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

/** The organization's agent, or a 404 (another organization's agent is not found either). */
export async function agentOf(db: Db, orgId: number, workflowId: number) {
  const agent = await getWorkflow(db, orgId, workflowId);
  if (!agent) throw notFound("Workflow");
  return agent;
}

export async function listScenarios(db: Db, orgId: number, workflowId: number): Promise<Row[]> {
  return db
    .select()
    .from(agentTestScenarios)
    .where(and(eq(agentTestScenarios.orgId, orgId), eq(agentTestScenarios.workflowId, workflowId)))
    .orderBy(asc(agentTestScenarios.id))
    .all();
}

export async function getScenario(db: Db, orgId: number, workflowId: number, id: number): Promise<Row> {
  const row = await db
    .select()
    .from(agentTestScenarios)
    .where(and(eq(agentTestScenarios.id, id), eq(agentTestScenarios.orgId, orgId), eq(agentTestScenarios.workflowId, workflowId)))
    .get();
  if (!row) throw notFound("Test scenario");
  return row;
}

const nameTaken = (name: string) => invalid(["body", "name"], "An agent's scenarios need distinct names", "value_error", name);

export async function createScenario(db: Db, orgId: number, workflowId: number, input: ScenarioInput): Promise<Row> {
  const agent = await agentOf(db, orgId, workflowId);
  const [{ n }] = await db.select({ n: count() }).from(agentTestScenarios).where(eq(agentTestScenarios.workflowId, workflowId)).all();
  if (n >= MAX_SCENARIOS_PER_AGENT) throw invalid(["body"], `An agent has at most ${MAX_SCENARIOS_PER_AGENT} test scenarios`);
  try {
    return (await db
      .insert(agentTestScenarios)
      .values({ orgId, workflowId, name: input.name, spec: input as Record<string, unknown>, agentVersion: agent.versionNumber })
      .returning()
      .get()) as Row;
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    throw err;
  }
}

export async function updateScenario(db: Db, orgId: number, workflowId: number, id: number, input: ScenarioInput): Promise<Row> {
  const agent = await agentOf(db, orgId, workflowId);
  const current = await getScenario(db, orgId, workflowId, id);
  try {
    return (await db
      .update(agentTestScenarios)
      .set({
        name: input.name,
        spec: input as Record<string, unknown>,
        revision: current.revision + 1,
        agentVersion: agent.versionNumber,
        updatedAt: isoNow(),
      })
      .where(eq(agentTestScenarios.id, current.id))
      .returning()
      .get()) as Row;
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    throw err;
  }
}

export async function deleteScenario(db: Db, orgId: number, workflowId: number, id: number): Promise<void> {
  const current = await getScenario(db, orgId, workflowId, id);
  await db.delete(agentTestScenarios).where(eq(agentTestScenarios.id, current.id)).run();
}
