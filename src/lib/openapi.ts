// The OpenAPI 3.1 document and the interactive reference, built from the routers' own zod schemas.
import { Scalar } from "@scalar/hono-api-reference";
import type { OpenAPIHono } from "@hono/zod-openapi";
import pkg from "../../package.json";
import type { AppEnv } from "./types";

/** Where wrangler serves the reference's browser build (scripts/docs-assets.mjs copies it into public/). */
export const DOCS_ASSETS = "/api/v1/docs/assets";

/**
 * The reference page: everything from this origin. No CDN script, no web fonts, no telemetry, no AI agent or
 * MCP helpers and no request proxy (Scalar's defaults reach fonts.scalar.com, proxy.scalar.com, ...), so it
 * works offline and behind a firewall that only lets this service through.
 */
const REFERENCE = {
  url: "/api/v1/openapi.json",
  pageTitle: "edgedial API reference",
  bundle: `${DOCS_ASSETS}/standalone.esm.js`,
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: "never",
  agent: { disabled: true },
  mcp: { disabled: true },
  documentDownloadType: "json",
  // An empty icon: otherwise the browser asks for /favicon.ico, a 404 logged as a console error.
  favicon: "data:,",
} as const;

export const SECURITY: Record<string, string[]>[] = [{ ApiKeyHeader: [] }, { BearerAuth: [] }];

type Operation = { security?: unknown[]; responses?: Record<string, unknown> };

const RATE_LIMITED = {
  description: "Rate limit exceeded (requests per API key; call starts also per organization and the concurrent-call cap)",
  headers: { "Retry-After": { description: "Whole seconds to wait before retrying", schema: { type: "integer", minimum: 1 } } },
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
};

/**
 * Every operation that takes an API key passes the per-key request limit (organizations/request-limit.ts), so each
 * can answer 429; it is added here once rather than in every route. Public operations (empty `security`) are not
 * limited by key and keep their own responses.
 */
export function withRateLimitResponses<D extends { paths?: object }>(doc: D): D {
  for (const item of Object.values(doc.paths ?? {}) as object[]) {
    for (const op of Object.values(item) as Operation[]) {
      if (!op || typeof op !== "object" || !op.responses) continue;
      if (Array.isArray(op.security) && op.security.length === 0) continue;
      op.responses["429"] = RATE_LIMITED;
    }
  }
  return doc;
}

export function mountOpenApi(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKeyHeader", { type: "apiKey", in: "header", name: "X-API-Key" });
  app.openAPIRegistry.registerComponent("securitySchemes", "BearerAuth", { type: "http", scheme: "bearer" });
  app.get("/api/v1/openapi.json", (c) => {
    const doc = app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: { title: "edgedial API", version: pkg.version, description: "Outbound calling for voice agents on Cloudflare Workers." },
      servers: [{ url: new URL(c.req.url).origin }],
      security: SECURITY,
    });
    return c.json(withRateLimitResponses(doc));
  });
  app.get("/api/v1/docs", Scalar(REFERENCE as Parameters<typeof Scalar>[0]));
  app.get("/", (c) => c.redirect("/api/v1/docs", 302));
}
