import { createRoute, z } from "@hono/zod-openapi";
import pkg from "../../package.json";
import { createRouter } from "../lib/app";
import { clock } from "../lib/clock";
import { publicBaseUrl, settingProblems } from "../lib/deployment";
import { json } from "../lib/schemas";
import { log } from "../lib/log";

const Health = z
  .object({
    status: z.enum(["ok", "degraded"]),
    version: z.string(),
    backend_api_endpoint: z.string(),
    deployment_mode: z.string(),
    auth_provider: z.literal("api_key"),
    missing: z.array(z.string()).openapi({
      description: "Names of required settings, secrets or bindings that are missing or unusable (`DB` when D1 is unreachable); never values",
      example: ["CALLBACK_SECRET"],
    }),
  })
  .openapi("Health");

const route = createRoute({
  method: "get",
  path: "/health",
  tags: ["health"],
  summary: "Instance health",
  security: [],
  responses: { 200: json(Health), 503: json(Health, "D1 unreachable, or a required setting missing (named in `missing`)") },
});

/**
 * A successful D1 check is trusted for this long in the isolate that made it, so a health poller or a load balancer
 * costs at most one D1 query per isolate per interval, not one per request. A failure is never remembered: once D1
 * breaks, health says so on the next request after at most this long.
 */
export const HEALTH_DB_OK_MS = 1_000;
const dbOkUntil = new WeakMap<D1Database, number>();

/** The settings' problems and the public origin never change while a Worker's env lives (a new deployment or secret
 *  is a new env): worked out once per env (parsing ENCRYPTION_KEYS, PUBLIC_BASE_URL), not per request. */
const fromSettings = new WeakMap<object, { names: readonly string[]; base: string }>();

async function dbReachable(c: { env: Env; get(key: "requestId"): string }): Promise<boolean> {
  const now = clock.now();
  if ((dbOkUntil.get(c.env.DB) ?? 0) > now) return true;
  try {
    await c.env.DB.prepare("SELECT 1").first();
    dbOkUntil.set(c.env.DB, now + HEALTH_DB_OK_MS);
    return true;
  } catch (err) {
    dbOkUntil.delete(c.env.DB);
    log("error", "health_d1_failed", { request_id: c.get("requestId"), error: String(err) });
    return false;
  }
}

export const healthRouter = createRouter().openapi(route, async (c) => {
  let settings = fromSettings.get(c.env);
  if (!settings) {
    settings = { names: settingProblems(c.env).map((p) => p.name), base: publicBaseUrl(c.env) };
    fromSettings.set(c.env, settings);
  }
  const { names, base } = settings;
  const missing = (await dbReachable(c)) ? [...names] : [...names, "DB"];
  const ok = missing.length === 0;
  const body = {
    status: ok ? ("ok" as const) : ("degraded" as const),
    version: pkg.version,
    backend_api_endpoint: base || new URL(c.req.url).origin,
    deployment_mode: c.env.DEPLOYMENT_MODE || "oss",
    auth_provider: "api_key" as const,
    missing,
  };
  return ok ? c.json(body, 200) : c.json(body, 503);
});
