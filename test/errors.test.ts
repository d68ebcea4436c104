import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import worker from "../src/index";
import { call, createOrg } from "./helpers";

const KEYS = "/api/v1/organizations/api-keys";

describe("error shapes", () => {
  it("malformed JSON is 422 json_invalid", async () => {
    const org = await createOrg();
    const res = await call("POST", KEYS, { key: org.key, raw: '{"name": ' });
    expect(res.status).toBe(422);
    expect(res.json.detail).toHaveLength(1);
    expect(res.json.detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
  });

  it("a JSON route posted another or no content type is a 415 naming application/json", async () => {
    const org = await createOrg();
    const plain = await call("POST", KEYS, { key: org.key, raw: '{"name":"k"}', headers: { "Content-Type": "text/plain" } });
    expect(plain.status).toBe(415);
    expect(plain.json).toEqual({ detail: "Unsupported Media Type: expected Content-Type application/json" });
    // No Content-Type at all (a byte body gets none).
    const res = await worker.fetch(
      new Request(`http://edgedial.test${KEYS}`, { method: "POST", headers: { "X-API-Key": org.key }, body: new TextEncoder().encode('{"name":"k"}') }),
      env,
      createExecutionContext(),
    );
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({ detail: "Unsupported Media Type: expected Content-Type application/json" });
  });

  it("a missing field is 422 missing / Field required at its loc", async () => {
    const org = await createOrg();
    const res = await call("POST", KEYS, { key: org.key, body: {} });
    expect(res.status).toBe(422);
    expect(res.json).toEqual({ detail: [{ loc: ["body", "name"], msg: "Field required", type: "missing" }] });
  });

  it("a wrong type is 422 with the exact loc and the input", async () => {
    const org = await createOrg();
    const res = await call("POST", KEYS, { key: org.key, body: { name: 42 } });
    expect(res.status).toBe(422);
    expect(res.json.detail[0]).toMatchObject({ loc: ["body", "name"], type: "string_type", input: 42 });
    const long = await call("POST", KEYS, { key: org.key, body: { name: "x".repeat(101) } });
    expect(long.json.detail[0]).toMatchObject({ loc: ["body", "name"], type: "string_too_long", ctx: { max_length: 100 } });
  });

  it("query and path problems carry query/path locs", async () => {
    const org = await createOrg();
    const q = await call("GET", `${KEYS}?limit=0`, { key: org.key });
    expect(q.status).toBe(422);
    expect(q.json.detail[0]).toMatchObject({ loc: ["query", "limit"], type: "greater_than_equal" });
    const bad = await call("GET", `${KEYS}?cursor=!!!`, { key: org.key });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0]).toMatchObject({ loc: ["query", "cursor"] });
    // A path id that is not one names nothing: 404.
    const p = await call("DELETE", `${KEYS}/abc`, { key: org.key });
    expect(p.status).toBe(404);
    expect(p.json).toEqual({ detail: "API key not found" });
  });

  it("unknown routes are 404 Not Found, with or without a key", async () => {
    const org = await createOrg();
    const res = await call("GET", "/api/v1/nothing-here", { key: org.key });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ detail: "Not Found" });
    const outside = await call("GET", "/elsewhere");
    expect(outside.status).toBe(404);
    expect(outside.json).toEqual({ detail: "Not Found" });
  });

  it("an internal failure is a 500 that hides its internals and logs them", async () => {
    const org = await createOrg();
    const broken = {
      prepare() {
        throw new Error("D1_ERROR: secret internal detail at /var/lib/db");
      },
    } as unknown as D1Database;
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await worker.fetch(
      new Request(`http://edgedial.test${KEYS}`, { headers: { "X-API-Key": org.key } }),
      { ...env, DB: broken },
      createExecutionContext(),
    );
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ detail: "Internal Server Error" });
    expect(log).toHaveBeenCalled();
    expect(String(log.mock.calls[0][0])).toContain("secret internal detail");
    log.mockRestore();
  });

  it("every response carries X-Request-Id; a sane incoming one is echoed", async () => {
    for (const path of ["/api/v1/health", KEYS, "/api/v1/nope"]) {
      const res = await call("GET", path);
      expect(res.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
    }
    const echoed = await call("GET", "/api/v1/health", { headers: { "X-Request-Id": "req-123" } });
    expect(echoed.headers.get("X-Request-Id")).toBe("req-123");
    const unsafe = await call("GET", "/api/v1/health", { headers: { "X-Request-Id": "bad id\twith spaces" } });
    // Replaced by a fresh id (a random UUID's hex may itself contain "bad": it once did).
    expect(unsafe.headers.get("X-Request-Id")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});

describe("zod issue mapping", () => {
  it("an absent enum, literal or union field is `missing`, not a bad option", async () => {
    const { z } = await import("@hono/zod-openapi");
    const { zodIssuesToItems } = await import("../src/lib/errors");
    const schema = z.object({
      mode: z.enum(["a", "b"]),
      kind: z.literal("x"),
      either: z.union([z.string(), z.number()]),
      tagged: z.discriminatedUnion("provider", [z.object({ provider: z.literal("p") }), z.object({ provider: z.literal("q") })]),
    });
    const items = zodIssuesToItems(schema.safeParse({ tagged: {} }).error!.issues, ["body"], { tagged: {} });
    const byLoc = Object.fromEntries(items.map((i) => [i.loc.join("."), i]));
    for (const loc of ["body.mode", "body.kind", "body.either", "body.tagged.provider"]) {
      expect(byLoc[loc], loc).toMatchObject({ type: "missing", msg: "Field required" });
    }
    const wrong = zodIssuesToItems(schema.safeParse({ mode: "c", kind: "x", either: 1, tagged: { provider: "z" } }).error!.issues, ["body"], {
      mode: "c",
      tagged: { provider: "z" },
    });
    expect(wrong.find((i) => i.loc.join(".") === "body.mode")).toMatchObject({ type: "enum", input: "c" });
    expect(wrong.find((i) => i.loc.join(".") === "body.tagged.provider")).toMatchObject({ type: "union_tag_invalid", input: "z" });
  });
});
