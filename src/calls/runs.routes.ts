// Call records of an agent: GET /workflow/{workflow_id}/runs and .../runs/{run_id}.
import { createRoute, z } from "@hono/zod-openapi";
import { and, desc, eq, lt } from "drizzle-orm";
import { workflowRuns } from "../db/schema";
import { createRouter } from "../lib/app";
import { getDb } from "../lib/db";
import { notFound } from "../lib/errors";
import { decodeCursor, pageOf, pageQuery, toPage } from "../lib/pagination";
import { errors, idParam, json } from "../lib/schemas";
import { getWorkflow } from "../workflows/store";
import { WorkflowRun, runView } from "./runs";

const tags = ["calls"];

const list = createRoute({
  method: "get",
  path: "/workflow/{workflow_id}/runs",
  tags,
  summary: "List an agent's calls (workflow runs), newest first",
  request: { params: idParam("workflow_id"), query: pageQuery },
  responses: { 200: json(pageOf(WorkflowRun)), ...errors(401, 404, 422) },
});

const one = createRoute({
  method: "get",
  path: "/workflow/{workflow_id}/runs/{run_id}",
  tags,
  summary: "One call (workflow run)",
  request: { params: idParam("workflow_id").extend(idParam("run_id").shape) },
  responses: { 200: json(WorkflowRun), ...errors(401, 404, 422) },
});

export const runsRouter = createRouter()
  .openapi(list, async (c) => {
    const { workflow_id } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    const before = decodeCursor(cursor);
    const db = getDb(c.env);
    if (!(await getWorkflow(db, c.get("orgId"), workflow_id))) throw notFound("Workflow");
    const rows = await db
      .select()
      .from(workflowRuns)
      .where(and(eq(workflowRuns.workflowId, workflow_id), eq(workflowRuns.orgId, c.get("orgId")), before ? lt(workflowRuns.id, before) : undefined))
      .orderBy(desc(workflowRuns.id))
      .limit(limit + 1)
      .all();
    return c.json(toPage(rows, limit, runView), 200);
  })
  .openapi(one, async (c) => {
    const { workflow_id, run_id } = c.req.valid("param");
    const db = getDb(c.env);
    if (!(await getWorkflow(db, c.get("orgId"), workflow_id))) throw notFound("Workflow");
    const row = await db
      .select()
      .from(workflowRuns)
      .where(and(eq(workflowRuns.id, run_id), eq(workflowRuns.workflowId, workflow_id), eq(workflowRuns.orgId, c.get("orgId"))))
      .get();
    if (!row) throw notFound("Workflow run");
    return c.json(runView(row), 200);
  });
