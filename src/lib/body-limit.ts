// Request body caps, enforced before any handler reads a byte: a declared Content-Length over the cap is refused at
// once, and a body without one (chunked) is counted while it streams and refused as soon as it passes the cap.
// Uploads (the signed local PUT) keep their own 100 MB limit (uploads/local.ts).
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ApiError } from "./errors";

/** JSON request bodies of the API. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;
/** Carrier callbacks: small forms or JSON events; a generous multiple of the largest any carrier sends. */
export const MAX_CALLBACK_BODY_BYTES = 256 * 1024;

const tooLarge = (max: number) => () => {
  throw new ApiError(413, `Request body too large (limit ${max} bytes)`);
};
const api = bodyLimit({ maxSize: MAX_JSON_BODY_BYTES, onError: tooLarge(MAX_JSON_BODY_BYTES) });
/** Audio greetings (a WAV body): src/uploads/greetings.ts states the cap and why. */
export const MAX_GREETING_BODY_BYTES = 8 * 1024 * 1024;
const greetings = bodyLimit({ maxSize: MAX_GREETING_BODY_BYTES, onError: tooLarge(MAX_GREETING_BODY_BYTES) });
const callbacks = bodyLimit({ maxSize: MAX_CALLBACK_BODY_BYTES, onError: tooLarge(MAX_CALLBACK_BODY_BYTES) });

/** Mounted on /api/v1/*: picks the cap by path. */
export const limitBodies: MiddlewareHandler = (c, next) => {
  const path = c.req.path;
  if (path.startsWith("/api/v1/uploads/")) return next();
  if (path === "/api/v1/greeting-recordings") return greetings(c, next);
  return (path.startsWith("/api/v1/telephony/") ? callbacks : api)(c, next);
};
