// Mounts every feature router under /api/v1 and the API document.
//
// The routers are loaded when a request first needs them, not when the isolate starts: building their zod schemas
// was a third of the Worker's global scope (bench/startup/README.md), which every new isolate paid before answering
// a carrier's webhook. Each router is a dynamic import (esbuild then runs the module's top level only when the
// import does) with the first path segments it serves; a request mounts the routers of its segment before Hono
// routes it. Routers that share a segment are mounted together in the order below, so overlapping paths match as
// they always did (test/lazy-routers.test.ts keeps the segments true). The API document loads them all.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { createApp } from "./lib/root-app";
import { mountOpenApi } from "./lib/openapi";
import { limitApiRequests } from "./organizations/request-limit";
import type { AppEnv } from "./lib/types";
import type { Schema } from "hono";

// A router's own route types do not matter here, only that it is an app of this environment.
type Router = OpenAPIHono<AppEnv, Schema, string>;
type LazyRouter = { segments: readonly string[]; load: () => Promise<Router> };

/** Every router, in mounting order (earlier routers match first where paths overlap), with the segments it serves. */
export const ROUTERS: readonly LazyRouter[] = [
  { segments: ["health"], load: () => import("./health/health.routes").then((m) => m.healthRouter) },
  { segments: ["organizations"], load: () => import("./organizations/api-keys.routes").then((m) => m.apiKeysRouter) },
  { segments: ["organizations"], load: () => import("./organizations/audit-log.routes").then((m) => m.auditLogRouter) },
  { segments: ["organizations"], load: () => import("./telephony/configs.routes").then((m) => m.telephonyRouter) },
  { segments: ["organizations"], load: () => import("./telephony/calling-policy.routes").then((m) => m.callingPolicyRouter) },
  { segments: ["organizations"], load: () => import("./telephony/suppressions.routes").then((m) => m.suppressionsRouter) },
  { segments: ["organizations"], load: () => import("./privacy/data-policy.routes").then((m) => m.dataPolicyRouter) },
  { segments: ["organizations"], load: () => import("./privacy/erasure.routes").then((m) => m.erasureRouter) },
  { segments: ["workflow"], load: () => import("./workflows/workflows.routes").then((m) => m.workflowsRouter) },
  { segments: ["s3", "uploads"], load: () => import("./uploads/uploads.routes").then((m) => m.uploadsRouter) },
  { segments: ["greeting-recordings"], load: () => import("./uploads/greetings.routes").then((m) => m.greetingsRouter) },
  { segments: ["campaign"], load: () => import("./campaigns/records.routes").then((m) => m.campaignRecordsRouter) },
  { segments: ["campaign"], load: () => import("./campaigns/append.routes").then((m) => m.campaignAppendRouter) },
  { segments: ["telephony"], load: () => import("./calls/callbacks.routes").then((m) => m.callbacksRouter) },
  { segments: ["telephony"], load: () => import("./calls/inbound/inbound.routes").then((m) => m.inboundRouter) },
  { segments: ["telephony"], load: () => import("./calls/inbound/exotel-inbound.routes").then((m) => m.exotelInboundRouter) },
  { segments: ["telephony"], load: () => import("./calls/resume/resume.routes").then((m) => m.resumeRouter) },
  { segments: ["telephony"], load: () => import("./calls/transfer/transfer.routes").then((m) => m.transferRouter) },
  { segments: ["workflow", "recordings"], load: () => import("./calls/runs/runs.routes").then((m) => m.runsRouter) },
  { segments: ["workflow"], load: () => import("./calls/runs/latency.routes").then((m) => m.latencyRouter) },
  { segments: ["workflow"], load: () => import("./agent-tests/scenarios.routes").then((m) => m.scenariosRouter) },
  { segments: ["workflow"], load: () => import("./agent-tests/runs.routes").then((m) => m.testRunsRouter) },
  { segments: ["public"], load: () => import("./calls/start/public.routes").then((m) => m.publicCallsRouter) },
  { segments: ["workflow", "web-call"], load: () => import("./calls/web/web-call.routes").then((m) => m.webCallRouter) },
  { segments: ["campaign"], load: () => import("./campaigns/control.routes").then((m) => m.campaignControlRouter) },
  { segments: ["webhooks"], load: () => import("./webhooks/webhooks.routes").then((m) => m.webhooksRouter) },
  { segments: ["organizations"], load: () => import("./telephony/sandbox.routes").then((m) => m.sandboxNumbersRouter) },
  { segments: ["workflow"], load: () => import("./telephony/sandbox.routes").then((m) => m.sandboxKeysRouter) },
];

/** Routers that share a segment, directly or through another, are one group: mounted together, in order. */
function groupsOf(routers: readonly LazyRouter[]): Map<string, LazyRouter[]> {
  const groupOf = new Map<string, LazyRouter[]>();
  for (const r of routers) {
    const merged = new Set(r.segments.flatMap((s) => groupOf.get(s) ?? []));
    const group = routers.filter((x) => x === r || merged.has(x));
    for (const x of group) for (const s of x.segments) groupOf.set(s, group);
  }
  return groupOf;
}
const GROUPS = groupsOf(ROUTERS);
const GROUP_COUNT = new Set(GROUPS.values()).size;

/** The first segment after /api/v1/ of a request's path, as Hono will see it (percent-decoded). */
function segmentOf(url: string): string | null {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/]*\/api\/v1\/([^/?#]+)/i.exec(url);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

/** The Worker's app with nothing mounted yet, and how to mount every router at once (the isolate has one). */
export function createApiApp() {
  const app = createApp();
  // After authentication (createApp), before any operation: API requests per key (429 `Rate limit exceeded`).
  app.use("/api/v1/*", limitApiRequests);
  const mounted = new Map<LazyRouter[], Promise<void>>();

  function mountGroup(group: LazyRouter[]): Promise<void> {
    let done = mounted.get(group);
    if (!done) {
      done = Promise.all(group.map((r) => r.load())).then((routers) => {
        for (const router of routers) app.route("/api/v1", router);
      });
      mounted.set(group, done);
      // A failed import is tried again by the next request rather than remembered.
      done.catch(() => mounted.delete(group));
    }
    return done;
  }

  /** Mounts every router now (tests that read `app.routes`; the API document). */
  async function mountAllRouters(): Promise<void> {
    await Promise.all([...new Set(GROUPS.values())].map(mountGroup));
  }

  const route = app.fetch;
  app.fetch = async (request, env, ctx) => {
    if (mounted.size < GROUP_COUNT) {
      const segment = segmentOf(request.url);
      const group = segment === null ? undefined : GROUPS.get(segment);
      if (group) await mountGroup(group);
    }
    return route(request, env, ctx);
  };
  mountOpenApi(app, documentApp);
  return { app, mountAllRouters };
}

/** The document's app: every router mounted in the order above, built on the document's first request. */
let documented: Promise<OpenAPIHono<AppEnv>> | null = null;
const documentApp = () =>
  (documented ??= Promise.all([import("@hono/zod-openapi"), ...ROUTERS.map((r) => r.load())]).then(([{ OpenAPIHono }, ...routers]) => {
    const doc = new OpenAPIHono<AppEnv>();
    for (const router of routers) doc.route("/api/v1", router);
    return doc;
  }));

export const { app, mountAllRouters } = createApiApp();
