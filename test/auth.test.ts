import { describe, expect, it } from "vitest";
import { call, createOrg } from "./helpers";

const KEYS = "/api/v1/organizations/api-keys";

describe("API key authentication", () => {
  it("401 Not authenticated without a key", async () => {
    const res = await call("GET", KEYS);
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ detail: "Not authenticated" });
  });

  it("401 Invalid API key for an unknown key, via either header", async () => {
    const variants: Record<string, string>[] = [{ "X-API-Key": "edk_nope" }, { Authorization: "Bearer edk_nope" }];
    for (const headers of variants) {
      const res = await call("GET", KEYS, { headers });
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ detail: "Invalid API key" });
    }
  });

  it("accepts X-API-Key and Authorization: Bearer", async () => {
    const org = await createOrg();
    expect((await call("GET", KEYS, { headers: { "X-API-Key": org.key } })).status).toBe(200);
    expect((await call("GET", KEYS, { headers: { Authorization: `Bearer ${org.key}` } })).status).toBe(200);
    expect((await call("GET", KEYS, { headers: { Authorization: `bearer ${org.key}` } })).status).toBe(200);
    // A non-Bearer scheme is not a key.
    expect((await call("GET", KEYS, { headers: { Authorization: `Basic ${org.key}` } })).status).toBe(401);
  });

  it("X-API-Key wins when both headers are sent", async () => {
    const org = await createOrg();
    const good = await call("GET", KEYS, { headers: { "X-API-Key": org.key, Authorization: "Bearer edk_wrong" } });
    expect(good.status).toBe(200);
    const bad = await call("GET", KEYS, { headers: { "X-API-Key": "edk_wrong", Authorization: `Bearer ${org.key}` } });
    expect(bad.status).toBe(401);
    expect(bad.json).toEqual({ detail: "Invalid API key" });
  });

  it("a revoked key stops working at once", async () => {
    const org = await createOrg();
    const created = await call("POST", KEYS, { key: org.key, body: { name: "ci" } });
    expect(created.status).toBe(200);
    const second = created.json.key as string;
    expect((await call("GET", KEYS, { key: second })).status).toBe(200);
    const revoked = await call("DELETE", `${KEYS}/${created.json.id}`, { key: org.key });
    expect(revoked.status).toBe(200);
    const after = await call("GET", KEYS, { key: second });
    expect(after.status).toBe(401);
    expect(after.json).toEqual({ detail: "Invalid API key" });
    // The key that revoked it still works.
    expect((await call("GET", KEYS, { key: org.key })).status).toBe(200);
  });

  it("public paths need no key", async () => {
    expect((await call("GET", "/api/v1/health")).status).toBe(200);
    expect((await call("GET", "/api/v1/openapi.json")).status).toBe(200);
    expect((await call("GET", "/api/v1/docs")).status).toBe(200);
  });
});
