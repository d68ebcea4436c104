import { createRoute, z } from "@hono/zod-openapi";
import pkg from "../../package.json";
import { createRouter } from "../lib/app";
import { publicBaseUrl, settingProblems } from "../lib/deployment";
import { json } from "../lib/schemas";

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

export const healthRouter = createRouter().openapi(route, async (c) => {
  const missing = settingProblems(c.env).map((p) => p.name);
  try {
    await c.env.DB.prepare("SELECT 1").first();
  } catch (err) {
    missing.push("DB");
    console.error(JSON.stringify({ level: "error", event: "health_d1_failed", request_id: c.get("requestId"), error: String(err) }));
  }
  const ok = missing.length === 0;
  const body = {
    status: ok ? ("ok" as const) : ("degraded" as const),
    version: pkg.version,
    backend_api_endpoint: publicBaseUrl(c.env) || new URL(c.req.url).origin,
    deployment_mode: c.env.DEPLOYMENT_MODE || "oss",
    auth_provider: "api_key" as const,
    missing,
  };
  return ok ? c.json(body, 200) : c.json(body, 503);
});
