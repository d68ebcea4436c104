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

export function mountOpenApi(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKeyHeader", { type: "apiKey", in: "header", name: "X-API-Key" });
  app.openAPIRegistry.registerComponent("securitySchemes", "BearerAuth", { type: "http", scheme: "bearer" });
  app.doc31("/api/v1/openapi.json", (c) => ({
    openapi: "3.1.0",
    info: { title: "edgedial API", version: pkg.version, description: "Outbound calling for voice agents on Cloudflare Workers." },
    servers: [{ url: new URL(c.req.url).origin }],
    security: SECURITY,
  }));
  app.get("/api/v1/docs", Scalar(REFERENCE as Parameters<typeof Scalar>[0]));
  app.get("/", (c) => c.redirect("/api/v1/docs", 302));
}
