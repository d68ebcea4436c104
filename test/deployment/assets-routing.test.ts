// wrangler.jsonc sends the API's paths to the Worker first (assets.run_worker_first), skipping the static assets'
// lookup on every API request, except the API reference's own files, which only the assets serve.
import { parse } from "jsonc-parser";
import { beforeAll, describe, expect, it } from "vitest";
import config from "../../wrangler.jsonc?raw";
import { app, mountAllRouters } from "../../src/app";
import { DOCS_ASSETS } from "../../src/lib/openapi";

const rules = (parse(config) as { assets: { run_worker_first?: string[] | boolean } }).assets.run_worker_first;

/** Cloudflare's rule match: `*` spans any characters (slashes too); a negative rule (`!`) wins over positive ones. */
function workerFirst(path: string): boolean {
  if (!Array.isArray(rules)) return rules === true;
  const hit = (glob: string) => new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`).test(path);
  return rules.filter((r) => !r.startsWith("!")).some(hit) && !rules.filter((r) => r.startsWith("!")).some((r) => hit(r.slice(1)));
}

describe("requests the Worker sees before the assets", () => {
  // The routers are mounted when a request needs them (src/app.ts); these read the whole route table.
  beforeAll(mountAllRouters);

  it("every API route the app serves, and nothing the assets serve", () => {
    const concrete = (p: string) => p.replace(/:[^/]+/g, "1").replace(/\*$/, "x");
    // "/" (a redirect to the reference) is left to the default order: the assets have no index there.
    const served = [...new Set(app.routes.filter((r) => r.method !== "ALL" && r.path !== "/").map((r) => concrete(r.path)))];
    expect(served.length).toBeGreaterThan(50);
    for (const path of served) expect(workerFirst(path), path).toBe(true);
    expect(workerFirst("/api/v1/anything/else")).toBe(true); // unknown API paths: the Worker's JSON 404 at once
    for (const path of [`${DOCS_ASSETS}/standalone.esm.js`, `${DOCS_ASSETS}/chunks/a.js`, "/dashboard/", "/dashboard/app.js"]) {
      expect(workerFirst(path), path).toBe(false);
    }
  });
});
