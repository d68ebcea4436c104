// The Worker's root app: request ids, auth, body limits, and the contract's error answers for every router. It loads
// no zod (a plain Hono app): the routers, each an OpenAPIHono (lib/app.ts), are mounted when a request first needs
// them (src/app.ts), so a new isolate that answers a webhook or a 404 does not load zod at all (bench/startup/).
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { allowedMethods, notFoundOrNotAllowed } from "./allowed-methods";
import { requireApiKey } from "./auth";
import { forgetReadsOnWrite } from "./read-cache";
import { limitBodies } from "./body-limit";
import { logClientError } from "./client-errors";
import { log } from "./log";
import { ApiErrorWithFields } from "./error-fields";
import { ApiError, PathNamesNothing } from "./errors";
import { MemoRouter } from "./memo-router";
import type { AppEnv } from "./types";

/**
 * The deepest nesting a JSON request body may have. Deeper bodies would overflow the stack wherever the value is
 * walked recursively (JSON.stringify of a stored definition, the idempotency hash), turning a client's mistake into
 * a 500; no field of this API needs anywhere near this depth.
 */
export const MAX_JSON_DEPTH = 64;

/** The nesting depth of a JSON text (brackets inside strings ignored); stops counting once past `limit`. */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92 /* \\ */) i++;
      else if (ch === 34 /* " */) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 123 /* { */ || ch === 91 /* [ */) {
      if (++depth > max) max = depth;
      if (max > limit) return max;
    } else if (ch === 125 /* } */ || ch === 93 /* ] */) depth--;
  }
  return max;
}

function requestIdOf(incoming: string | undefined): string {
  return incoming && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : crypto.randomUUID();
}

export function createApp() {
  // Feature routers' routes are copied into this one (app.route), so only its router ever matches (memo-router.ts).
  const app = new Hono<AppEnv>({ router: new MemoRouter() });

  app.use("*", async (c, next) => {
    const id = requestIdOf(c.req.header("x-request-id"));
    c.set("requestId", id);
    await next();
    try {
      c.res.headers.set("X-Request-Id", id);
    } catch {
      // Immutable headers (a proxied response): copy once.
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set("X-Request-Id", id);
    }
  });
  app.use("/api/v1/*", requireApiKey);
  app.use("/api/v1/*", forgetReadsOnWrite);
  app.use("/api/v1/*", limitBodies);
  // Refuse absurdly nested JSON before any handler walks it (see MAX_JSON_DEPTH). Carrier callbacks and uploads are
  // left alone: their handlers need the raw bytes, and they never recurse into the body.
  app.use("/api/v1/*", async (c, next) => {
    const path = c.req.path;
    if (!path.startsWith("/api/v1/telephony/") && !path.startsWith("/api/v1/uploads/") && /json/i.test(c.req.header("content-type") ?? "")) {
      const text = await c.req.text(); // cached by Hono: the validators parse this same text afterwards
      if (jsonDepth(text) > MAX_JSON_DEPTH) {
        throw new ApiError(422, [
          { loc: ["body"], msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, type: "json_too_deep", ctx: { max_depth: MAX_JSON_DEPTH } },
        ]);
      }
    }
    return next();
  });

  app.notFound(notFoundOrNotAllowed(app.routes));
  const allowedFor = allowedMethods(app.routes);

  app.onError((err, c) => {
    // `DELETE /campaign/create` reaches `DELETE /campaign/{campaign_id}` first; the literal path is POST's alone.
    if (err instanceof PathNamesNothing) {
      const allowed = allowedFor(c.req.path);
      if (allowed.length > 0 && !allowed.includes(c.req.method.toUpperCase())) {
        logClientError(c, 405, "Method Not Allowed");
        return c.json({ detail: "Method Not Allowed" }, 405, { Allow: allowed.join(", ") });
      }
    }
    if (err instanceof ApiError) {
      if (err.status < 500) logClientError(c, err.status, err.detail);
      for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
      const fields = err instanceof ApiErrorWithFields ? err.fields : {};
      return c.json({ ...fields, detail: err.detail }, err.status);
    }
    if (err instanceof HTTPException) {
      // Hono's body parser: malformed JSON is a client mistake, reported like any other 422.
      if (err.status === 400 && /Malformed JSON/i.test(err.message)) {
        const detail = [{ loc: ["body"], msg: "JSON decode error", type: "json_invalid", ctx: { error: err.message } }];
        logClientError(c, 422, detail);
        return c.json({ detail }, 422);
      }
      // zod-openapi's media-type gate says only "Unsupported Media Type"; every JSON-bodied route here takes JSON alone.
      if (err.status === 415) {
        const detail = "Unsupported Media Type: expected Content-Type application/json";
        logClientError(c, 415, detail);
        return c.json({ detail }, 415);
      }
      if (err.status < 500) {
        logClientError(c, err.status, err.message || "Bad Request");
        return c.json({ detail: err.message || "Bad Request" }, err.status);
      }
    }
    log("error", "unhandled_error", { request_id: c.get("requestId"), path: c.req.path, error: String(err), stack: (err as Error)?.stack });
    return c.json({ detail: "Internal Server Error" }, 500);
  });

  return app;
}
