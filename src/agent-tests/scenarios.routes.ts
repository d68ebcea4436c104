// The agent's test scenarios over the API: list, create, read, replace, delete, under the agent
// (/workflow/{workflow_id}/tests/scenarios). Another organization's agent or scenario is a 404.
import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../lib/app";
import { getDb } from "../lib/db";
import { errors, idParam, json } from "../lib/schemas";
import { Scenario, ScenarioInput } from "./schemas";
import { agentOf, createScenario, deleteScenario, getScenario, listScenarios, scenarioView, updateScenario } from "./store";

const tags = ["agent tests"];
const AgentId = idParam("workflow_id");
const ScenarioParams = z.object({ ...idParam("workflow_id").shape, ...idParam("scenario_id").shape });
const body = <T extends z.ZodTypeAny>(schema: T) => ({ content: { "application/json": { schema } }, required: true });
const BASE = "/workflow/{workflow_id}/tests/scenarios";

const list = createRoute({
  method: "get",
  path: BASE,
  tags,
  summary: "List the agent's test scenarios (its suite), oldest first",
  request: { params: AgentId },
  responses: { 200: json(z.object({ items: z.array(Scenario) })), ...errors(401, 404, 422) },
});

const create = createRoute({
  method: "post",
  path: BASE,
  tags,
  summary: "Add a test scenario to the agent's suite",
  description: "Stamped with the agent's current version. Names are unique per agent (a 422 at `name`); at most 100 scenarios per agent.",
  request: { params: AgentId, body: body(ScenarioInput) },
  responses: { 200: json(Scenario), ...errors(401, 404, 422) },
});

const read = createRoute({
  method: "get",
  path: `${BASE}/{scenario_id}`,
  tags,
  summary: "Get one test scenario",
  request: { params: ScenarioParams },
  responses: { 200: json(Scenario), ...errors(401, 404, 422) },
});

const replace = createRoute({
  method: "put",
  path: `${BASE}/{scenario_id}`,
  tags,
  summary: "Replace a test scenario",
  description: "The whole scenario is sent; its revision is bumped and it is stamped with the agent's current version.",
  request: { params: ScenarioParams, body: body(ScenarioInput) },
  responses: { 200: json(Scenario), ...errors(401, 404, 422) },
});

const remove = createRoute({
  method: "delete",
  path: `${BASE}/{scenario_id}`,
  tags,
  summary: "Delete a test scenario",
  request: { params: ScenarioParams },
  responses: { 204: { description: "Deleted" }, ...errors(401, 404, 422) },
});

export const scenariosRouter = createRouter()
  .openapi(list, async (c) => {
    const { workflow_id } = c.req.valid("param");
    const db = getDb(c.env);
    await agentOf(db, c.get("orgId"), workflow_id);
    const rows = await listScenarios(db, c.get("orgId"), workflow_id);
    return c.json({ items: rows.map(scenarioView) }, 200);
  })
  .openapi(create, async (c) => {
    const { workflow_id } = c.req.valid("param");
    const row = await createScenario(getDb(c.env), c.get("orgId"), workflow_id, c.req.valid("json"));
    return c.json(scenarioView(row), 200);
  })
  .openapi(read, async (c) => {
    const { workflow_id, scenario_id } = c.req.valid("param");
    return c.json(scenarioView(await getScenario(getDb(c.env), c.get("orgId"), workflow_id, scenario_id)), 200);
  })
  .openapi(replace, async (c) => {
    const { workflow_id, scenario_id } = c.req.valid("param");
    const row = await updateScenario(getDb(c.env), c.get("orgId"), workflow_id, scenario_id, c.req.valid("json"));
    return c.json(scenarioView(row), 200);
  })
  .openapi(remove, async (c) => {
    const { workflow_id, scenario_id } = c.req.valid("param");
    await deleteScenario(getDb(c.env), c.get("orgId"), workflow_id, scenario_id);
    return c.body(null, 204);
  });
