// The isolate's read cache (src/lib/read-cache.ts) through the Worker, with READ_CACHE_MS as deployed (1000): a
// repeated GET of a campaign's progress or of a telephony configuration is answered from the last answer for at
// most that long; a write by the organization through the isolate ends it at once; another organization never
// gets it. The rest of the suite runs with the cache off (vitest.config.ts).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { app } from "../src/app";
import { clock } from "../src/lib/clock";
import {
  READ_CACHE_DEFAULT_MS,
  READ_CACHE_LIMIT_MS,
  cachedRead,
  clearReadCache,
  organizationWrote,
  readCacheMs,
  readThrough,
  readTicket,
  storeRead,
} from "../src/lib/read-cache";
import { seedCampaign, setupOrg } from "./campaigns/support";

const DEPLOYED = { ...env, READ_CACHE_MS: "1000" };

async function send(method: string, path: string, key: string, body?: unknown) {
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { "X-API-Key": key };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await app.fetch(
    new Request(`http://edgedial.test${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }),
    DEPLOYED,
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

beforeEach(() => {
  clearReadCache();
  clock.set(Date.now());
});
afterEach(() => clock.set(null));

describe("the read cache through the Worker", () => {
  it("serves a campaign's progress for READ_CACHE_MS, ends it on the organization's own write, and never across organizations", async () => {
    const o = await setupOrg();
    const { id, stub } = await seedCampaign(o);
    const path = `/api/v1/campaign/${id}/progress`;
    expect((await send("GET", path, o.org.key)).json.state).toBe("draft");

    // Moved behind the Worker's back (as an alarm or a callback would): the last answer stands within the bound...
    await stub.start();
    clock.advance(999);
    expect((await send("GET", path, o.org.key)).json.state).toBe("draft");
    // ...and not a millisecond after it.
    clock.advance(1);
    const running = (await send("GET", path, o.org.key)).json.state;
    expect(running).not.toBe("draft");

    // Another organization asking for the same campaign is refused, cached answer or not.
    const other = await setupOrg();
    expect((await send("GET", path, other.org.key)).status).toBe(404);

    // The organization's own write through this isolate: the next read is fresh at once.
    expect((await send("POST", `/api/v1/campaign/${id}/pause`, o.org.key)).status).toBe(200);
    expect((await send("GET", path, o.org.key)).json.state).toBe("paused");
  });

  it("serves a telephony configuration for READ_CACHE_MS; a PUT through the isolate is seen at once", async () => {
    const o = await setupOrg();
    const path = `/api/v1/organizations/telephony-configs/${o.configId}`;
    const first = await send("GET", path, o.org.key);
    expect(first.status).toBe(200);

    // Renamed straight in D1 (another isolate's write): not seen until the bound has passed.
    await env.DB.prepare("UPDATE telephony_configs SET name = 'renamed elsewhere' WHERE id = ?").bind(o.configId).run();
    clock.advance(500);
    expect((await send("GET", path, o.org.key)).json.name).toBe(first.json.name);
    clock.advance(500);
    expect((await send("GET", path, o.org.key)).json.name).toBe("renamed elsewhere");

    // A write through this isolate (even a refused one could have changed nothing; this one changes the name).
    expect((await send("PUT", path, o.org.key, { name: "renamed here" })).status).toBe(200);
    expect((await send("GET", path, o.org.key)).json.name).toBe("renamed here");

    const other = await setupOrg();
    expect((await send("GET", path, other.org.key)).status).toBe(404);
  });

  it("never keeps a 404: a configuration that appears is served as soon as it exists", async () => {
    const o = await setupOrg();
    const missing = `/api/v1/organizations/telephony-configs/${o.configId + 100_000}`;
    expect((await send("GET", missing, o.org.key)).status).toBe(404);
    let reads = 0;
    const read = async () => (++reads > 1 ? { found: true } : null);
    expect(await readThrough(DEPLOYED, o.org.id, "thing 1", read)).toBeNull();
    expect(await readThrough(DEPLOYED, o.org.id, "thing 1", read)).toEqual({ found: true });
    expect(await readThrough(DEPLOYED, o.org.id, "thing 1", read)).toEqual({ found: true });
    expect(reads).toBe(2);
  });
});

describe("read-cache rules", () => {
  it("a read under way when the organization writes does not store its answer", () => {
    const now = clock.now();
    const ticket = readTicket(7);
    organizationWrote(7); // the write begins (or ends) while the read is out
    storeRead(7, "r", ticket, { v: "old" }, now, 1000);
    expect(cachedRead(7, "r", now)).toBeUndefined();
    // A read that starts after it stores as usual; another organization's write leaves it alone.
    storeRead(7, "r", readTicket(7), { v: "new" }, now, 1000);
    organizationWrote(8);
    expect(cachedRead(7, "r", now)).toEqual({ value: { v: "new" } });
    expect(cachedRead(8, "r", now)).toBeUndefined();
  });

  it("an answer past its own bound is never served, whatever was kept before it", () => {
    const now = clock.now();
    storeRead(9, "long", readTicket(9), "kept 5 s", now, 5000);
    storeRead(9, "short", readTicket(9), "kept 1 s", now, 1000);
    expect(cachedRead(9, "short", now + 999)).toEqual({ value: "kept 1 s" });
    expect(cachedRead(9, "short", now + 1000)).toBeUndefined();
    expect(cachedRead(9, "long", now + 4999)).toEqual({ value: "kept 5 s" });
  });

  it("READ_CACHE_MS: 0 turns it off, an invalid value is the default, a large one is capped", async () => {
    expect(readCacheMs({ READ_CACHE_MS: "0" })).toBe(0);
    expect(readCacheMs({ READ_CACHE_MS: "250" })).toBe(250);
    expect(readCacheMs({ READ_CACHE_MS: "soon" })).toBe(READ_CACHE_DEFAULT_MS);
    expect(readCacheMs({})).toBe(READ_CACHE_DEFAULT_MS);
    expect(readCacheMs({ READ_CACHE_MS: "600000" })).toBe(READ_CACHE_LIMIT_MS);
    let reads = 0;
    const off = { READ_CACHE_MS: "0" };
    await readThrough(off, 1, "x", async () => ++reads);
    await readThrough(off, 1, "x", async () => ++reads);
    expect(reads).toBe(2);
  });
});
