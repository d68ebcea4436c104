// The routers are mounted when a request first needs them (src/app.ts): a fresh isolate builds none of their
// schemas, a request mounts its own segment's routers (and only them), and the segments each router declares are
// the ones it serves, so nothing is left unmounted and overlapping paths match in the order they always did.
import { OpenAPIHono } from "@hono/zod-openapi";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApiApp, ROUTERS } from "../src/app";
import type { AppEnv } from "../src/lib/types";

// An app as a new isolate has it: the Worker's own has been mounted by the files run before this one.
const { app, mountAllRouters } = createApiApp();

const segmentOf = (path: string) => path.split("/")[3];
/** The document's own routes (openapi.json, docs) are mounted at once; every other API route comes from a router. */
const OWN = new Set(["openapi.json", "docs"]);
const routerRoutes = (routes: readonly { method: string; path: string }[]) =>
  routes.filter((r) => r.method !== "ALL" && r.path.startsWith("/api/v1/") && !OWN.has(segmentOf(r.path)));
const apiRoutes = () => routerRoutes(app.routes);

describe("routers mounted on demand", () => {
  it("none at the start; a request mounts the routers of its path's segment, and only theirs", async () => {
    expect(apiRoutes().map((r) => r.path)).toEqual([]);
    const res = await app.fetch(new Request("http://edgedial.test/api/v1/health"), env);
    expect(res.status).toBeLessThan(500);
    expect(new Set(apiRoutes().map((r) => segmentOf(r.path)))).toEqual(new Set(["health"]));
    // A segment a router shares with another (workflow: runs, latency, web calls) brings the whole group.
    const runs = await app.fetch(new Request("http://edgedial.test/api/v1/recordings/1"), env);
    expect(runs.status).toBe(403); // the route answered (no signature), not the 404 of an unknown path
    expect(new Set(apiRoutes().map((r) => segmentOf(r.path)))).toEqual(new Set(["health", "workflow", "recordings", "web-call"]));
    // An unknown segment mounts nothing and is the JSON 404 it always was.
    const unknown = await app.fetch(new Request("http://edgedial.test/api/v1/nope/1", { headers: { "X-API-Key": "x" } }), env);
    expect(unknown.status).toBe(401);
    expect(new Set(apiRoutes().map((r) => segmentOf(r.path))).size).toBe(4);
  });

  it("each router serves only the segments it declares, and every router is listed", async () => {
    for (const r of ROUTERS) {
      const router = await r.load();
      const served = new Set(router.routes.filter((x) => x.method !== "ALL").map((x) => x.path.split("/")[1]));
      expect([...served].sort(), r.load.toString()).toEqual([...r.segments].sort());
    }
  });

  it("once all are mounted, every segment's routes are in the order an app mounting every router at once has", async () => {
    await mountAllRouters();
    const eager = new OpenAPIHono<AppEnv>();
    for (const r of ROUTERS) eager.route("/api/v1", await r.load());
    const bySegment = (routes: { method: string; path: string }[]) => {
      const out = new Map<string, string[]>();
      for (const r of routerRoutes(routes)) {
        const s = segmentOf(r.path);
        out.set(s, [...(out.get(s) ?? []), `${r.method} ${r.path}`]);
      }
      return out;
    };
    const lazy = bySegment(app.routes);
    expect([...lazy.keys()].sort()).toEqual([...bySegment(eager.routes).keys()].sort());
    for (const [segment, routes] of bySegment(eager.routes)) expect(lazy.get(segment), segment).toEqual(routes);
  });
});
