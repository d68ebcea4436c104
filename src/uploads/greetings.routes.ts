// Audio greetings: upload a WAV (the request body itself), list, read, download and delete them. Their ids are what
// a contact's `greeting_override_recording_id` names.
import { createRoute, z } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { greetingRecordings } from "../db/schema";
import { createRouter } from "../lib/app";
import { wavFile } from "../lib/audio/wav";
import { actorOf, auditStatement } from "../lib/audit";
import { getDb } from "../lib/db";
import { ApiError, invalid, notFound } from "../lib/errors";
import { decodeCursor, pageOf, pageQuery, toPage } from "../lib/pagination";
import { errors, json } from "../lib/schemas";
import { MAX_GREETING_BYTES, MAX_GREETING_SECONDS, getGreeting, greetingKey, greetingView, listGreetings, newRecordingId, parseGreeting } from "./greetings";

const tags = ["greeting recordings"];
const BASE = "/greeting-recordings";
const WAV_TYPES = new Set(["audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave"]);

const GreetingRecording = z
  .object({
    recording_id: z.string().openapi({ example: "rec_5f0c2a9d8e7b6a5f4e3d2c1b", description: "Name it in `greeting_override_recording_id`" }),
    name: z.string(),
    sample_rate: z.number().int().openapi({ example: 16000 }),
    duration_ms: z.number().int(),
    size_bytes: z.number().int().openapi({ description: "Of the stored mono WAV" }),
    created_at: z.string(),
  })
  .openapi("GreetingRecording");

const recordingParam = z.object({
  recording_id: z
    .string()
    .max(64)
    .openapi({ param: { name: "recording_id", in: "path" }, example: "rec_5f0c2a9d8e7b6a5f4e3d2c1b" }),
});

const upload = createRoute({
  method: "post",
  path: BASE,
  tags,
  summary: "Upload an audio greeting (the body is the WAV file)",
  description:
    `16-bit PCM WAV, mono or stereo (stored as mono), at 8000, 16000 or 24000 Hz, up to ${MAX_GREETING_SECONDS} s and ` +
    `${MAX_GREETING_BYTES} bytes. Sent with \`Content-Type: audio/wav\`. A call whose contact names it plays it as the ` +
    "greeting when a voice agent takes the call (the media path).",
  request: {
    query: z.object({ name: z.string().trim().min(1).max(255).optional().openapi({ description: "A label; defaults to `greeting`" }) }),
    body: { content: { "audio/wav": { schema: z.string().openapi({ format: "binary" }) } }, required: true },
  },
  responses: { 201: json(GreetingRecording, "Stored"), ...errors(401, 413, 415, 422) },
});

const list = createRoute({
  method: "get",
  path: BASE,
  tags,
  summary: "List the organization's audio greetings, newest first",
  request: { query: pageQuery },
  responses: { 200: json(pageOf(GreetingRecording)), ...errors(401, 422) },
});

const one = createRoute({
  method: "get",
  path: `${BASE}/{recording_id}`,
  tags,
  summary: "One audio greeting",
  request: { params: recordingParam },
  responses: { 200: json(GreetingRecording), ...errors(401, 404) },
});

const audio = createRoute({
  method: "get",
  path: `${BASE}/{recording_id}/audio`,
  tags,
  summary: "An audio greeting's file, as stored (mono 16-bit WAV)",
  request: { params: recordingParam },
  responses: { 200: { description: "The WAV file", content: { "audio/wav": { schema: z.string().openapi({ format: "binary" }) } } }, ...errors(401, 404) },
});

const remove = createRoute({
  method: "delete",
  path: `${BASE}/{recording_id}`,
  tags,
  summary: "Delete an audio greeting (calls naming it afterwards speak the text greeting, and their runs say why)",
  request: { params: recordingParam },
  responses: { 204: { description: "Deleted" }, ...errors(401, 404) },
});

export const greetingsRouter = createRouter()
  .openapi(upload, async (c) => {
    const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
    if (!WAV_TYPES.has(type)) throw new ApiError(415, "Content-Type must be audio/wav");
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    const parsed = parseGreeting(bytes);
    if (!parsed.ok) throw invalid(["body"], parsed.msg, "audio_error");
    const orgId = c.get("orgId");
    const recordingId = newRecordingId();
    const key = greetingKey(orgId, recordingId);
    // Kept normalized: a mono 16-bit WAV at its own rate.
    const file = wavFile(parsed.audio.samples, parsed.audio.rate);
    await c.env.UPLOADS.put(key, file, { httpMetadata: { contentType: "audio/wav" } });
    const db = getDb(c.env);
    const values = {
      orgId,
      recordingId,
      name: c.req.valid("query").name ?? "greeting",
      key,
      sampleRate: parsed.audio.rate,
      durationMs: Math.round((parsed.audio.samples.length / parsed.audio.rate) * 1000),
      sizeBytes: file.length,
    };
    const [[row]] = await db.batch([
      db.insert(greetingRecordings).values(values).returning(),
      auditStatement(db, actorOf(c), {
        action: "create",
        resourceType: "greeting_recording",
        resourceId: sql`(SELECT id FROM greeting_recordings WHERE org_id = ${orgId} AND recording_id = ${recordingId})`,
        summary: { recording_id: recordingId, name: values.name },
      }),
    ]);
    return c.json(greetingView(row), 201);
  })
  .openapi(list, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const rows = await listGreetings(getDb(c.env), c.get("orgId"), decodeCursor(cursor), limit);
    return c.json(toPage(rows, limit, greetingView), 200);
  })
  .openapi(one, async (c) => {
    const row = await getGreeting(getDb(c.env), c.get("orgId"), c.req.valid("param").recording_id);
    if (!row) throw notFound("Greeting recording");
    return c.json(greetingView(row), 200);
  })
  .openapi(audio, async (c) => {
    const row = await getGreeting(getDb(c.env), c.get("orgId"), c.req.valid("param").recording_id);
    const obj = row ? await c.env.UPLOADS.get(row.key) : null;
    if (!row || !obj) throw notFound("Greeting recording");
    return new Response(obj.body, { status: 200, headers: { "Content-Type": "audio/wav", "Content-Length": String(obj.size) } }) as never;
  })
  .openapi(remove, async (c) => {
    const db = getDb(c.env);
    const orgId = c.get("orgId");
    const row = await getGreeting(db, orgId, c.req.valid("param").recording_id);
    if (!row) throw notFound("Greeting recording");
    await db.batch([
      db.delete(greetingRecordings).where(and(eq(greetingRecordings.id, row.id), eq(greetingRecordings.orgId, orgId))),
      auditStatement(db, actorOf(c), { action: "delete", resourceType: "greeting_recording", resourceId: row.id, summary: { recording_id: row.recordingId } }),
    ]);
    await c.env.UPLOADS.delete(row.key);
    return c.body(null, 204) as never;
  });
