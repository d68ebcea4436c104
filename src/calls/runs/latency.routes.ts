// An agent's answer latency over its recent calls: GET /workflow/{workflow_id}/latency.
import { createRoute, z } from "@hono/zod-openapi";
import { and, desc, eq, isNotNull, or } from "drizzle-orm";
import { turnDetection } from "../../agent/engines";
import { workflowRuns } from "../../db/schema";
import { createRouter } from "../../lib/app";
import { getDb } from "../../lib/db";
import { notFound } from "../../lib/errors";
import { errors, idParam, json } from "../../lib/schemas";
import { getWorkflow } from "../../workflows/store";
import { AgentLatency } from "./latency";
import { heardByCarrier, summarizeRuns, transcriptFigures } from "./latency-summary";

export const LATENCY_CALLS_DEFAULT = 50;
export const LATENCY_CALLS_MAX = 500;

const latency = createRoute({
  method: "get",
  path: "/workflow/{workflow_id}/latency",
  tags: ["calls"],
  summary: "How fast an agent answers: p50/p95 of each reply's timing over its recent calls, and the gap heard per carrier",
  description:
    "Each figure is in ms after the caller's last word ended, over the agent replies (with a timing) of the agent's most recent calls that have a transcript. `heard`: the gap from the end of the caller's voice to the start of the agent's as the calls' recordings show it, p50/p90 over those calls and per carrier.",
  request: {
    params: idParam("workflow_id"),
    query: z.object({
      calls: z.coerce
        .number()
        .int()
        .min(1)
        .max(LATENCY_CALLS_MAX)
        .default(LATENCY_CALLS_DEFAULT)
        .openapi({
          // Stated by hand: the coerced, defaulted number loses its bounds on the way into the document.
          type: "integer",
          minimum: 1,
          maximum: LATENCY_CALLS_MAX,
          param: { name: "calls", in: "query" },
          description: `How many recent calls to read (default ${LATENCY_CALLS_DEFAULT}, at most ${LATENCY_CALLS_MAX})`,
        }),
    }),
  },
  responses: { 200: json(AgentLatency), ...errors(401, 404, 422) },
});

export const latencyRouter = createRouter().openapi(latency, async (c) => {
  const { workflow_id } = c.req.valid("param");
  const { calls } = c.req.valid("query");
  const db = getDb(c.env);
  const orgId = c.get("orgId");
  const agent = await getWorkflow(db, orgId, workflow_id);
  if (!agent) throw notFound("Workflow");
  // Each run's figures from its small latency column; a row from before it has them in its old transcript column.
  const rows = await db
    .select({ latency: workflowRuns.latency, transcript: workflowRuns.transcript, provider: workflowRuns.provider })
    .from(workflowRuns)
    .where(
      and(
        eq(workflowRuns.workflowId, workflow_id),
        eq(workflowRuns.orgId, orgId),
        // Agent tests' calls are not the agent's traffic.
        eq(workflowRuns.isTest, false),
        or(isNotNull(workflowRuns.latency), isNotNull(workflowRuns.transcript)),
      ),
    )
    .orderBy(desc(workflowRuns.id))
    .limit(calls)
    .all();
  const runs = rows.map((r) => r.latency ?? transcriptFigures(r.transcript));
  const heard = heardByCarrier(rows.map((r, i) => ({ carrier: r.provider, latency: runs[i] })));
  const ai = Boolean((c.env as { AI?: unknown }).AI) && (c.env as { OFFLINE_ENGINES?: string }).OFFLINE_ENGINES !== "true";
  return c.json({ ...summarizeRuns(workflow_id, runs), heard, turn_detection: turnDetection(agent.workflowConfigurations, ai) }, 200);
});
