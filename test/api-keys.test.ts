import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../src/lib/crypto";
import { call, createOrg } from "./helpers";

const KEYS = "/api/v1/organizations/api-keys";

describe("API key lifecycle", () => {
  it("creates a key shown once, stored only as a hash", async () => {
    const org = await createOrg();
    const res = await call("POST", KEYS, { key: org.key, body: { name: "deploy bot" } });
    expect(res.status).toBe(200);
    const { id, name, key, key_last4, created_at } = res.json;
    expect(name).toBe("deploy bot");
    expect(key).toMatch(/^edk_[A-Za-z0-9_-]{43}$/);
    expect(key_last4).toBe(key.slice(-4));
    expect(new Date(created_at).toISOString()).toBe(created_at);

    const row = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?").bind(id).first<Record<string, unknown>>();
    expect(row!.key_hash).toBe(await sha256Hex(key));
    expect(JSON.stringify(row)).not.toContain(key);

    const list = await call("GET", KEYS, { key: org.key });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(key);
    expect(list.json.items.map((k: { id: number }) => k.id)).toContain(id);
    expect(list.json.items[0]).not.toHaveProperty("key");
  });

  it("lists newest first with cursor pagination", async () => {
    const org = await createOrg();
    for (const name of ["a", "b", "c", "d"]) await call("POST", KEYS, { key: org.key, body: { name } });
    const first = await call("GET", `${KEYS}?limit=2`, { key: org.key });
    expect(first.json.items.map((k: { name: string }) => k.name)).toEqual(["d", "c"]);
    expect(first.json.next_cursor).toBeTruthy();
    const second = await call("GET", `${KEYS}?limit=2&cursor=${first.json.next_cursor}`, { key: org.key });
    expect(second.json.items.map((k: { name: string }) => k.name)).toEqual(["b", "a"]);
    const third = await call("GET", `${KEYS}?limit=2&cursor=${second.json.next_cursor}`, { key: org.key });
    expect(third.json.items.map((k: { name: string }) => k.name)).toEqual(["test"]);
    expect(third.json.next_cursor).toBeNull();
  });

  it("revoked keys leave the list; revoking twice or another org's key is 404", async () => {
    const a = await createOrg();
    const b = await createOrg();
    const k = await call("POST", KEYS, { key: a.key, body: { name: "temp" } });
    expect((await call("DELETE", `${KEYS}/${k.json.id}`, { key: b.key })).json).toEqual({ detail: "API key not found" });
    expect((await call("DELETE", `${KEYS}/${k.json.id}`, { key: a.key })).status).toBe(200);
    expect((await call("DELETE", `${KEYS}/${k.json.id}`, { key: a.key })).status).toBe(404);
    const list = await call("GET", KEYS, { key: a.key });
    expect(list.json.items.map((x: { id: number }) => x.id)).not.toContain(k.json.id);
  });

  it("one organization never sees another's keys", async () => {
    const a = await createOrg();
    const b = await createOrg();
    await call("POST", KEYS, { key: a.key, body: { name: "secret-of-a" } });
    const list = await call("GET", KEYS, { key: b.key });
    expect(list.text).not.toContain("secret-of-a");
  });
});
