// The OpenAPI 3.1 document and the interactive reference, built from the routers' own zod schemas.
import { Scalar } from "@scalar/hono-api-reference";
import type { OpenAPIHono } from "@hono/zod-openapi";
import pkg from "../../package.json";
import type { AppEnv } from "./types";

export const SECURITY: Record<string, string[]>[] = [{ ApiKeyHeader: [] }, { BearerAuth: [] }];

export function mountOpenApi(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKeyHeader", { type: "apiKey", in: "header", name: "X-API-Key" });
  app.openAPIRegistry.registerComponent("securitySchemes", "BearerAuth", { type: "http", scheme: "bearer" });
  app.doc31("/api/v1/openapi.json", (c) => ({
    openapi: "3.1.0",
    info: { title: "edgedial API", version: pkg.version, description: "Outbound calling for voice agents on Cloudflare Workers." },
    servers: [{ url: new URL(c.req.url).origin }],
    security: SECURITY,
  }));
  app.get("/api/v1/docs", Scalar({ url: "/api/v1/openapi.json", pageTitle: "edgedial API reference" }));
}
