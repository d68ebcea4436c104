import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import worker from "../src/index";
import { HEALTH_DB_OK_MS } from "../src/health/health.routes";
import { clock } from "../src/lib/clock";
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

  describe("the D1 check", () => {
    afterEach(() => clock.set(null));

    /** A D1 binding that counts its checks and can be broken; one object, as a Worker's env.DB is. */
    function flakyDb() {
      const state = { checks: 0, broken: false };
      const db = {
        prepare(sql: string) {
          state.checks++;
          if (state.broken) throw new Error("D1_ERROR: database unavailable");
          return env.DB.prepare(sql);
        },
      } as unknown as D1Database;
      const get = async () => {
        const res = await worker.fetch(new Request("http://edgedial.test/api/v1/health"), { ...env, DB: db }, createExecutionContext());
        return { status: res.status, json: (await res.json()) as { status: string; missing: string[] } };
      };
      return { state, get };
    }

    it("asks D1 once per HEALTH_DB_OK_MS while it answers, and reports a failure within that bound", async () => {
      clock.set(Date.now());
      const { state, get } = flakyDb();
      expect((await get()).status).toBe(200);
      expect((await get()).status).toBe(200);
      expect(state.checks).toBe(1); // the second answer rests on the first check
      state.broken = true;
      clock.advance(HEALTH_DB_OK_MS - 1);
      expect((await get()).status).toBe(200); // the stated bound: a good check is trusted this long
      expect(state.checks).toBe(1);
      clock.advance(1);
      const degraded = await get();
      expect(degraded.status).toBe(503);
      expect(degraded.json).toMatchObject({ status: "degraded", missing: ["DB"] });
      expect(state.checks).toBe(2);
      // A failure is never remembered: every request asks again until D1 answers.
      expect((await get()).status).toBe(503);
      expect(state.checks).toBe(3);
      state.broken = false;
      expect((await get()).status).toBe(200);
      expect(state.checks).toBe(4);
    });
  });
});
