// The OpenAPI 3.1 document and the interactive reference, built from the routers' own zod schemas.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Hono, MiddlewareHandler } from "hono";
import { version } from "../../package.json";
import { localDev } from "./deployment";
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

/** The reference's introduction (Markdown): what the service does today, and how to authenticate. */
const DESCRIPTION = `Voice agents on phone calls, on Cloudflare Workers. Describe an agent as a graph of nodes (\`/workflow\`):
what to say, what to find out, the HTTP tools and keypad it may use, when to hand over to a person; its engines are
Workers AI by default, or OpenAI-compatible models, Deepgram and ElevenLabs on your own keys.

- **Carriers** (\`/organizations/telephony-configs\`): Twilio, Plivo, Vobiz, Telnyx, Vonage, Cloudonix, Exotel,
  Asterisk, and the offline \`sandbox\` simulator in local development; their numbers answer inbound calls with an agent.
- **Calls**: single outbound calls, inbound calls, and web calls from a browser; each run keeps its transcript,
  recording, usage, the agent's actions and transfer, gathered values and post-call analysis.
- **Campaigns** (\`/campaign\`): a CSV of contacts dialed under calling windows, retries, attempt caps and calling
  rules, with live progress and results.
- **Around them**: agent tests against a simulated caller, webhooks, greeting recordings, a suppression list,
  calling policy, data retention and erasure, API keys and an audit log.

**Authentication**: send an API key as \`X-API-Key: edk_…\` or \`Authorization: Bearer edk_…\`. Locally,
\`npm run dev\` prints one and keeps it in \`.dev-api-key\`; a deployment creates one with \`npm run org:create\`.
Paste it in the Authentication box to try requests here.`;

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

/** The extension a schema names its local-development pattern with (see `localDevPattern`). */
const LOCAL_DEV_PATTERN = "x-local-dev-pattern";

/**
 * A string rule that local development relaxes (webhook URLs: https, or http too under LOCAL_DEV). The schema states
 * the deployed rule as its `pattern`; the document served by a LOCAL_DEV Worker states the relaxed one, so a client
 * validating against the document it was given never refuses what that server accepts.
 */
export function localDevPattern(pattern: string, local: string): Record<string, string> {
  return { pattern, [LOCAL_DEV_PATTERN]: local };
}

/** Under LOCAL_DEV, every schema with a local-development pattern gets it as its `pattern`. */
export function forLocalDev<D>(doc: D): D {
  const seen = new Set<object>();
  const walk = (v: unknown) => {
    if (!v || typeof v !== "object" || seen.has(v)) return;
    seen.add(v);
    const o = v as Record<string, unknown>;
    if (typeof o[LOCAL_DEV_PATTERN] === "string") o.pattern = o[LOCAL_DEV_PATTERN];
    for (const child of Object.values(o)) walk(child);
  };
  walk(doc);
  return doc;
}

/**
 * The document's route, the reference page and `/`. `documented` gives the app whose routes the document describes
 * (one with every router mounted, in order: the root app mounts them lazily and loads no zod itself).
 */
export function mountOpenApi(app: Hono<AppEnv>, documented: () => Promise<OpenAPIHono<AppEnv>>) {
  const withSchemes = new WeakSet<OpenAPIHono<AppEnv>>();
  app.get("/api/v1/openapi.json", async (c) => {
    const source = await documented();
    if (!withSchemes.has(source)) {
      withSchemes.add(source);
      source.openAPIRegistry.registerComponent("securitySchemes", "ApiKeyHeader", { type: "apiKey", in: "header", name: "X-API-Key" });
      source.openAPIRegistry.registerComponent("securitySchemes", "BearerAuth", { type: "http", scheme: "bearer" });
    }
    const doc = source.getOpenAPI31Document({
      openapi: "3.1.0",
      info: { title: "edgedial API", version, description: DESCRIPTION },
      servers: [{ url: new URL(c.req.url).origin }],
      security: SECURITY,
    });
    const served = withRateLimitResponses(doc);
    return c.json(localDev(c.env) ? forLocalDev(served) : served);
  });
  // The reference page's renderer loads on its first request, not in every new isolate's start (bench/startup/).
  type Scalar = typeof import("@scalar/hono-api-reference").Scalar;
  let page: MiddlewareHandler<AppEnv> | undefined;
  app.get("/api/v1/docs", async (c, next) => {
    page ??= (await import("@scalar/hono-api-reference")).Scalar(REFERENCE as Parameters<Scalar>[0]) as unknown as MiddlewareHandler<AppEnv>;
    return page(c, next);
  });
  app.get("/", (c) => c.redirect("/api/v1/docs", 302));
}
