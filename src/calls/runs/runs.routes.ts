// Call records of an agent: GET /workflow/{workflow_id}/runs and .../runs/{run_id}.
import { createRoute, z } from "@hono/zod-openapi";
import { and, eq, gte, isNotNull, isNull, lt, sql } from "drizzle-orm";
import { workflowRuns } from "../../db/schema";
import { createRouter } from "../../lib/app";
import { getDb } from "../../lib/db";
import { notFound } from "../../lib/errors";
import { decodeCursor, newestFirst, pageOf, pageQuery } from "../../lib/pagination";
import { errors, idParam, json, MAX_ID } from "../../lib/schemas";
import { getWorkflow } from "../../workflows/store";
import { type RecordingCodec, recordingCodecOf, recordingWavBytes, recordingWavStream } from "../../lib/audio/recording-format";
import { clock } from "../../lib/clock";
import { CALL_SETTINGS, requireSettings } from "../../lib/deployment";
import { ApiError } from "../../lib/errors";
import { recordingUrlValid, runDetails, runsPage } from "./recordings";
import { RUN_DIRECTIONS, WorkflowRun, WorkflowRunListItem } from "./runs";
import { AMD_CLASSES } from "../../agent/amd/classifier";

/** The list's filters (all optional, combined with AND): what a dashboard's calls list narrows by. */
const listQuery = pageQuery.extend({
  direction: z
    .enum(RUN_DIRECTIONS)
    .optional()
    .openapi({ param: { name: "direction", in: "query" }, description: "Only calls of this direction (outbound, inbound, web)" }),
  status: WorkflowRun.shape.status.optional().openapi({ param: { name: "status", in: "query" }, description: "Only calls with this status" }),
  amd_class: z
    .enum(AMD_CLASSES)
    .optional()
    .openapi({
      param: { name: "amd_class", in: "query" },
      description: "Only outbound calls the agent judged this way (answering-machine detection: human, machine_greeting, beep, ivr_menu, ...)",
    }),
  source: z
    .enum(["single", "campaign"])
    .optional()
    .openapi({
      param: { name: "source", in: "query" },
      description: "single: calls not made by a campaign (the API, a trigger, inbound, web); campaign: a campaign's calls",
    }),
  phone_number: z
    .string()
    .regex(/^\+?[0-9]{1,20}$/, "Digits, optionally after +")
    .optional()
    .openapi({ param: { name: "phone_number", in: "query" }, description: "Only calls whose other party's number contains these digits", example: "555" }),
  // Any offset is accepted (RFC 3339 date-time) and compared in UTC; `+` must travel percent-encoded (%2B).
  created_after: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({
      param: { name: "created_after", in: "query" },
      description: "Only calls created at or after this time (RFC 3339 date-time, `Z` or an offset such as `+02:00` sent as `%2B02:00`)",
    }),
  created_before: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({
      param: { name: "created_before", in: "query" },
      description: "Only calls created before this time (RFC 3339 date-time, `Z` or an offset such as `+02:00` sent as `%2B02:00`)",
    }),
});

/** The stored form of created_at (strftime '%Y-%m-%dT%H:%M:%fZ'), so text order is time order. */
const storedTime = (iso: string) => new Date(iso).toISOString();

const tags = ["calls"];

const list = createRoute({
  method: "get",
  path: "/workflow/{workflow_id}/runs",
  tags,
  summary: "List an agent's calls (workflow runs), newest first",
  request: { params: idParam("workflow_id"), query: listQuery },
  responses: { 200: json(pageOf(WorkflowRunListItem)), ...errors(401, 404, 422) },
});

const download = createRoute({
  method: "get",
  path: "/recordings/{run_id}",
  tags,
  security: [],
  summary: "A call's recording (two-channel WAV), through the signed link in the run's recording_url",
  description: "No API key: the link's signature and expiry authorize it.",
  request: {
    params: idParam("run_id"),
    // Optional here so a malformed run id is a 404 first; a link without them is refused as invalid.
    query: z.object({
      expires: z.coerce
        .number()
        .int()
        .optional()
        // Coerced from the query string, which is never null: the document says what the link carries.
        .openapi({ type: "integer", minimum: 0, maximum: MAX_ID, description: "Unix seconds after which the link is refused (from the link)" }),
      signature: z.string().optional(),
    }),
  },
  responses: {
    200: { description: "The recording", content: { "audio/wav": { schema: z.string().openapi({ format: "binary" }) } } },
    ...errors(403, 404, 422),
  },
});

const one = createRoute({
  method: "get",
  path: "/workflow/{workflow_id}/runs/{run_id}",
  tags,
  summary: "One call (workflow run)",
  request: { params: idParam("workflow_id").extend(idParam("run_id").shape) },
  responses: { 200: json(WorkflowRun), ...errors(401, 404, 422) },
});

const removeRecording = createRoute({
  method: "delete",
  path: "/workflow/{workflow_id}/runs/{run_id}/recording",
  tags,
  summary: "Delete a call's recording (the file and its link; the run and its transcript stay)",
  request: { params: idParam("workflow_id").extend(idParam("run_id").shape) },
  responses: { 204: { description: "Deleted" }, ...errors(401, 404, 422) },
});

export const runsRouter = createRouter()
  .openapi(list, async (c) => {
    const { workflow_id } = c.req.valid("param");
    const { limit, cursor, direction, status, amd_class, source, phone_number, created_after, created_before } = c.req.valid("query");
    const before = decodeCursor(cursor);
    const db = getDb(c.env);
    const orgId = c.get("orgId");
    const only = and(
      direction ? eq(workflowRuns.direction, direction) : undefined,
      status ? eq(workflowRuns.status, status) : undefined,
      amd_class ? eq(workflowRuns.amdClass, amd_class) : undefined,
      source === "single" ? isNull(workflowRuns.campaignId) : source === "campaign" ? isNotNull(workflowRuns.campaignId) : undefined,
      // instr, not LIKE: the digits are matched literally (no wildcard in them to escape).
      phone_number ? sql`instr(${workflowRuns.phoneNumber}, ${phone_number.replace(/^\+/, "")}) > 0` : undefined,
      created_after ? gte(workflowRuns.createdAt, storedTime(created_after)) : undefined,
      created_before ? lt(workflowRuns.createdAt, storedTime(created_before)) : undefined,
    );
    if (!(await getWorkflow(db, orgId, workflow_id))) throw notFound("Workflow");
    const query = db.select().from(workflowRuns).$dynamic();
    // An agent test's calls are not the agent's calls: they are read through their test run (docs/agent-tests.md).
    const notTests = eq(workflowRuns.isTest, false);
    const rows = await newestFirst(
      query,
      workflowRuns.id,
      before,
      limit,
      eq(workflowRuns.workflowId, workflow_id),
      eq(workflowRuns.orgId, orgId),
      notTests,
      only,
    ).all();
    return c.json(await runsPage(c.env, c.req.url, rows, limit), 200);
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
    return c.json(await runDetails(c.env, c.req.url, row), 200);
  })
  .openapi(removeRecording, async (c) => {
    const { workflow_id, run_id } = c.req.valid("param");
    const db = getDb(c.env);
    const mine = and(eq(workflowRuns.id, run_id), eq(workflowRuns.workflowId, workflow_id), eq(workflowRuns.orgId, c.get("orgId")));
    const row = await db.select({ key: workflowRuns.recordingKey }).from(workflowRuns).where(mine).get();
    if (!row?.key) throw notFound(row ? "Recording" : "Workflow run");
    // The link goes first: a download that races the delete finds no key rather than a half-deleted file.
    await db.update(workflowRuns).set({ recordingKey: null, recordingRate: null }).where(mine).run();
    await c.env.UPLOADS.delete(row.key);
    return c.body(null, 204) as never;
  })
  .openapi(download, async (c) => {
    const { run_id } = c.req.valid("param");
    const { expires, signature } = c.req.valid("query");
    requireSettings(c.env, CALL_SETTINGS);
    const valid = expires !== undefined && signature !== undefined && (await recordingUrlValid(c.env.CALLBACK_SECRET, run_id, expires, signature, clock.now()));
    if (!valid) throw new ApiError(403, "Invalid or expired recording link");
    const row = await getDb(c.env)
      .select({ key: workflowRuns.recordingKey, rate: workflowRuns.recordingRate })
      .from(workflowRuns)
      .where(eq(workflowRuns.id, run_id))
      .get();
    const object = row?.key ? await c.env.UPLOADS.get(row.key) : null;
    if (!object || !row) throw notFound("Recording");
    // Stored as μ-law (or, before it, raw PCM), served as 16-bit PCM WAV: the key says which, the size gives the length.
    const codec = recordingCodecOf(object.key);
    return new Response(wavStream(object, codec, row.rate ?? 8000), {
      headers: { "Content-Type": "audio/wav", "Content-Length": String(recordingWavBytes(codec, object.size)), "Cache-Control": "private, no-store" },
    });
  });

/** The stored recording behind a WAV header, decoded and streamed as R2 hands it over. */
function wavStream(object: R2ObjectBody, codec: RecordingCodec, rate: number): ReadableStream<Uint8Array> {
  return recordingWavStream(object.body, object.size, codec, rate);
}
