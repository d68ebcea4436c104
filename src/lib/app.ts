// The feature routers' factory: an OpenAPIHono whose validation failures are the contract's 422 (or a path's 404).
// The Worker's root app (middleware, error answers) is lib/root-app.ts, which loads no zod.
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Hook } from "@hono/zod-openapi";
import { ApiError, NOT_FOUND_ISSUE, PathNamesNothing, zodIssuesToItems, type Loc } from "./errors";
import type { AppEnv } from "./types";

const LOC_OF_TARGET: Record<string, string> = { json: "body", form: "body", param: "path", query: "query", header: "header", cookie: "cookie" };

/** Every zod-openapi validation failure becomes the contract's 422 list. */
const defaultHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (!result.success) {
    const r = result as unknown as { error: { issues: Parameters<typeof zodIssuesToItems>[0] }; target: string; data?: unknown };
    // A path that names nothing (a malformed id) is the resource's 404, not a validation error.
    if (r.target === "param") {
      const named = r.error.issues.find((i) => i.code === "custom" && i.params?.type === NOT_FOUND_ISSUE);
      throw new PathNamesNothing(404, named ? named.message : "Not Found");
    }
    const prefix: Loc = [LOC_OF_TARGET[r.target] ?? r.target];
    throw new ApiError(422, zodIssuesToItems(r.error.issues, prefix, r.data));
  }
};

/** A router for one feature; mount it on the app under /api/v1. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook });
}
