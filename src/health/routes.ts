import { createRoute, z } from "@hono/zod-openapi";
import pkg from "../../package.json";
import { createRouter } from "../lib/app";
import { json } from "../lib/schemas";

const Health = z
  .object({
    status: z.enum(["ok", "degraded"]),
    version: z.string(),
    backend_api_endpoint: z.string(),
    deployment_mode: z.string(),
    auth_provider: z.literal("api_key"),
  })
  .openapi("Health");

const route = createRoute({
  method: "get",
  path: "/health",
  tags: ["health"],
  summary: "Instance health",
  security: [],
  responses: { 200: json(Health), 503: json(Health, "D1 unreachable") },
});

export const healthRouter = createRouter().openapi(route, async (c) => {
  let ok = true;
  try {
    await c.env.DB.prepare("SELECT 1").first();
  } catch (err) {
    ok = false;
    console.error(JSON.stringify({ level: "error", event: "health_d1_failed", request_id: c.get("requestId"), error: String(err) }));
  }
  const body = {
    status: ok ? ("ok" as const) : ("degraded" as const),
    version: pkg.version,
    backend_api_endpoint: c.env.PUBLIC_BASE_URL || new URL(c.req.url).origin,
    deployment_mode: c.env.DEPLOYMENT_MODE || "oss",
    auth_provider: "api_key" as const,
  };
  return ok ? c.json(body, 200) : c.json(body, 503);
});
