// A client's mistake (any 4xx) is routine: one info line without a stack, so real faults stand out in the logs.
// The line names what was refused, never the rejected values (a 422's inputs may be large or secret).
import type { Context } from "hono";
import type { ValidationItem } from "./errors";
import { log } from "./log";

const MAX_MESSAGE = 200;

export function logClientError(c: Context, status: number, detail: string | ValidationItem[]): void {
  const summary =
    typeof detail === "string"
      ? { detail: detail.length > MAX_MESSAGE ? `${detail.slice(0, MAX_MESSAGE)}…` : detail }
      : { errors: detail.slice(0, 10).map((i) => ({ loc: i.loc.join("."), type: i.type })), error_count: detail.length };
  // A refused callback's path holds its per-run token (a replayed one is genuine).
  log("info", "client_error", { request_id: c.get("requestId"), method: c.req.method, path: c.req.path, status, ...summary });
}
