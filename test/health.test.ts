import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import pkg from "../package.json";
import { call } from "./helpers";

describe("GET /api/v1/health", () => {
  it("answers ok without a key", async () => {
    const res = await call("GET", "/api/v1/health");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      status: "ok",
      version: pkg.version,
      backend_api_endpoint: "http://edgedial.test",
      deployment_mode: "oss",
      auth_provider: "api_key",
      missing: [],
    });
  });

  it("answers 503 degraded when D1 fails", async () => {
    const brokenDb = {
      prepare() {
        throw new Error("D1_ERROR: database unavailable");
      },
    } as unknown as D1Database;
    const res = await worker.fetch(new Request("http://edgedial.test/api/v1/health"), { ...env, DB: brokenDb }, createExecutionContext());
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: "degraded", version: pkg.version, missing: ["DB"] });
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
  });
});
