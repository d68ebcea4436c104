// Contact upload: a presigned PUT URL, straight to R2 over S3 when R2 S3 credentials are configured,
// else to this Worker's signed upload route, which streams the body into the R2 binding under the signed limits.
import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../lib/app";
import { clock } from "../lib/clock";
import { publicBaseUrl, requireSettings } from "../lib/deployment";
import { ApiError } from "../lib/errors";
import { errors, json } from "../lib/schemas";
import { MAX_UPLOAD_BYTES, UPLOAD_CONTENT_TYPE, UPLOAD_EXPIRES_SECONDS, isWellFormedKey, newFileKey } from "./keys";
import { checkGrant, localUploadUrl, mediaType } from "./local";
import { presignS3Put, s3TargetFromEnv } from "./s3";

const PresignRequest = z
  .strictObject({
    file_name: z.string().min(1).max(255).openapi({ example: "contacts.csv" }),
    file_size: z
      .number()
      .int()
      .min(1)
      .openapi({
        description: `Exact size of the file in bytes, 1 to ${MAX_UPLOAD_BYTES} (100 MiB); larger is a 413. The upload must be exactly this size.`,
        maximum: MAX_UPLOAD_BYTES,
        example: 2048,
      }),
    content_type: z
      .string()
      .refine((v) => v.trim().toLowerCase() === UPLOAD_CONTENT_TYPE, { message: "content_type must be text/csv", params: { type: "literal_error" } })
      .openapi({
        description: "Must be `text/csv` (compared case-insensitively, surrounding spaces ignored); the upload is then sent with `Content-Type: text/csv`.",
        pattern: "^\\s*[Tt][Ee][Xx][Tt]/[Cc][Ss][Vv]\\s*$",
        example: UPLOAD_CONTENT_TYPE,
      }),
  })
  .openapi("PresignedUploadRequest");

const PresignResponse = z
  .object({
    upload_url: z.string().openapi({ description: "PUT the bytes here with `Content-Type: text/csv` and exactly `file_size` bytes" }),
    file_key: z.string().openapi({ description: "Give this as `source_url` when creating a campaign" }),
    s3_key: z.string().openapi({ description: "Same as file_key" }),
    expires_in: z.number().int().openapi({ description: "Seconds the URL stays valid", example: UPLOAD_EXPIRES_SECONDS }),
  })
  .openapi("PresignedUpload");

const presign = createRoute({
  method: "post",
  path: "/s3/presigned-upload-url",
  tags: ["uploads"],
  summary: "Get a presigned URL to upload a contacts CSV",
  request: { body: { content: { "application/json": { schema: PresignRequest } }, required: true } },
  responses: { 200: json(PresignResponse), ...errors(401, 413, 422) },
});

const tooLarge = (limit: number) => new ApiError(413, `File too large: the limit is ${limit} bytes`);
/** The signed PUT's 413: names the file_size the upload URL was issued for. */
const largerThanDeclared = (size: number) =>
  new ApiError(413, `File too large: the body is larger than the declared file_size of ${size} bytes the upload URL was issued for`);

/** A 422 about the uploaded bytes as a whole. */
const badBody = (msg: string, type: string, ctx: Record<string, unknown>) => new ApiError(422, [{ loc: ["body"], msg, type, ctx }]);

/** Copies `body` into `sink` until it ends or passes `limit` bytes; on overflow or a short body the sink is aborted. */
async function pump(body: ReadableStream<Uint8Array>, sink: WritableStream<Uint8Array>, limit: number) {
  const reader = body.getReader();
  const writer = sink.getWriter();
  let received = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.byteLength;
      if (received > limit) {
        await reader.cancel().catch(() => {});
        await writer.abort(new Error("upload larger than declared")).catch(() => {});
        return { received, overflow: true };
      }
      await writer.write(value);
    }
  } catch (err) {
    await writer.abort(err).catch(() => {});
    throw err;
  }
  if (received < limit) {
    await writer.abort(new Error("upload shorter than declared")).catch(() => {});
    return { received, overflow: false };
  }
  await writer.close();
  return { received, overflow: false };
}

export const uploadsRouter = createRouter().openapi(presign, async (c) => {
  const { file_name, file_size } = c.req.valid("json");
  if (file_size > MAX_UPLOAD_BYTES) throw tooLarge(MAX_UPLOAD_BYTES);
  const key = newFileKey(c.get("orgId"), file_name);
  const nowMs = clock.now();
  const s3 = s3TargetFromEnv(c.env);
  if (!s3) requireSettings(c.env, ["UPLOAD_SIGNING_SECRET"]);
  const upload_url = s3
    ? await presignS3Put(s3, key, { size: file_size, contentType: UPLOAD_CONTENT_TYPE, expiresIn: UPLOAD_EXPIRES_SECONDS, nowMs })
    : await localUploadUrl(publicBaseUrl(c.env, c.req.url) || new URL(c.req.url).origin, c.env.UPLOAD_SIGNING_SECRET, {
        key,
        size: file_size,
        type: UPLOAD_CONTENT_TYPE,
        expires: Math.floor(nowMs / 1000) + UPLOAD_EXPIRES_SECONDS,
      });
  return c.json({ upload_url, file_key: key, s3_key: key, expires_in: UPLOAD_EXPIRES_SECONDS }, 200);
});

// The signed upload route. Its key spans several path segments, which an OpenAPI path parameter cannot express,
// so it is routed directly and documented below. Any key reaches the handler (`.` would stop at an encoded line
// break and leave an undocumented 404): a malformed one is the documented 403.
uploadsRouter.put("/uploads/:key{[\\s\\S]+}", async (c) => {
  requireSettings(c.env, ["UPLOAD_SIGNING_SECRET"]);
  const key = c.req.param("key");
  const check = isWellFormedKey(key)
    ? await checkGrant(c.env.UPLOAD_SIGNING_SECRET, key, new URL(c.req.url).searchParams, clock.now())
    : ({ ok: false, status: 403, detail: "Invalid upload signature" } as const);
  if (!check.ok) throw new ApiError(check.status, check.detail);
  const { size, type } = check.grant;

  if (mediaType(c.req.header("content-type")) !== type) {
    throw new ApiError(415, `Unsupported Media Type: expected Content-Type ${type}, as the upload URL was issued for`);
  }
  const lengthHeader = c.req.header("content-length");
  if (lengthHeader !== undefined && /^\d+$/.test(lengthHeader)) {
    const length = Number(lengthHeader);
    if (length > size) throw largerThanDeclared(size);
    if (length < size)
      throw badBody(`Body is ${length} bytes; the upload URL was issued for ${size}`, "upload_size_mismatch", { declared: size, received: length });
  }
  const body = c.req.raw.body;
  if (!body) throw badBody(`Body is empty; the upload URL was issued for ${size} bytes`, "upload_size_mismatch", { declared: size, received: 0 });

  // Count while streaming (the Content-Length may be absent or wrong): stop at the first byte past the limit.
  // R2 stores a put only when its fixed-length stream completes, so a refused body leaves nothing behind.
  const fixed = new FixedLengthStream(size);
  const stored = c.env.UPLOADS.put(key, fixed.readable, { httpMetadata: { contentType: type } });
  stored.catch(() => {}); // awaited below; a refused body makes it reject first
  const { received, overflow } = await pump(body, fixed.writable, size);
  if (overflow || received < size) await stored.catch(() => {}); // settled: nothing was stored
  if (overflow) throw largerThanDeclared(size);
  if (received < size) {
    throw badBody(`Body is ${received} bytes; the upload URL was issued for ${size}`, "upload_size_mismatch", { declared: size, received });
  }
  await stored;
  return c.body(null, 200);
});

uploadsRouter.openAPIRegistry.registerPath({
  method: "put",
  path: "/uploads/{key}",
  tags: ["uploads"],
  summary: "Upload the file bytes to a Worker-served presigned URL (use the exact `upload_url` returned)",
  description: "Only for URLs issued without R2 S3 credentials. No API key: the query's signature authorizes one key, size and content type until it expires.",
  security: [],
  request: {
    params: z.object({
      key: z
        .string()
        .openapi({ param: { name: "key", in: "path" }, description: "The file key (contains slashes); a key not issued by this service is a 403" }),
    }),
    query: z.object({ size: z.string(), type: z.string(), expires: z.string(), sig: z.string() }),
    body: { content: { "text/csv": { schema: z.string() } }, required: true },
  },
  responses: {
    200: { description: "Stored" },
    ...errors(403, 413, 415, 422),
  },
});
