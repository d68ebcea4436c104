// D1 round trips per request on the routes bench/api measures, with the API key read from D1 (cold) and from the
// isolate's cache (warm). Printed for bench/api/README.md; the expectations catch a route that starts asking more.
import { afterAll, describe, expect, it } from "vitest";
import { clock } from "../src/lib/clock";
import { clearKeyCache } from "../src/lib/key-cache";
import { clearReadCache } from "../src/lib/read-cache";
import { seedCampaign, setupOrg } from "./campaigns/support";
import { countedCall } from "./d1-counter";
import { call } from "./helpers";

const rows: string[] = [];
afterAll(() => console.log(`D1 round trips per request\n${rows.join("\n")}`));

describe("D1 round trips per request", () => {
  it("health, campaign progress and a telephony configuration, cold and warm key", async () => {
    const o = await setupOrg();
    const campaign = await seedCampaign(o); // as create leaves it: the D1 row and the object
    const routes: [string, string, number, number][] = [
      // path, label, expected trips with the key read from D1, and from the cache
      // health: its D1 check, then none while the last good one is under HEALTH_DB_OK_MS old (the clock is pinned)
      ["/api/v1/health", "GET /api/v1/health", 1, 0],
      // progress: D1 only until this isolate has seen the campaign exist; then the campaign's object alone
      [`/api/v1/campaign/${campaign.id}/progress`, "GET /api/v1/campaign/{id}/progress", 2, 0],
      // the configuration and its numbers: one statement (a JSON subquery for the numbers)
      [`/api/v1/organizations/telephony-configs/${o.configId}`, "GET /api/v1/organizations/telephony-configs/{id}", 2, 1],
    ];
    clock.set(Date.now()); // last_used_at already written this minute by the setup: no write in the counts
    try {
      for (const [path, label, cold, warm] of routes) {
        clearKeyCache();
        const first = await countedCall("GET", path, o.org.key);
        const second = await countedCall("GET", path, o.org.key);
        expect(first.status).toBe(200);
        expect(second.status).toBe(200);
        rows.push(`  ${label}: ${first.trips} cold key, ${second.trips} cached key  [${second.sql.join(" | ")}]`);
        expect([first.trips, second.trips]).toEqual([cold, warm]);
      }
      // As deployed (READ_CACHE_MS 1000; the suite runs with it off): a repeated read within the bound asks nothing.
      for (const [path, label] of routes.slice(1)) {
        clearReadCache();
        const first = await countedCall("GET", path, o.org.key, { READ_CACHE_MS: "1000" });
        const second = await countedCall("GET", path, o.org.key, { READ_CACHE_MS: "1000" });
        expect([first.status, second.status]).toEqual([200, 200]);
        rows.push(`  ${label}, read cache on: ${first.trips} first read, ${second.trips} within READ_CACHE_MS`);
        expect(second.trips).toBe(0);
        expect(second.json).toEqual(first.json);
      }
    } finally {
      clock.set(null);
    }
  });
});

describe("progress without D1", () => {
  it("another organization's campaign and one still being created stay 404 once the isolate knows the id", async () => {
    const a = await setupOrg();
    const b = await setupOrg();
    const campaign = await seedCampaign(a);
    const path = `/api/v1/campaign/${campaign.id}/progress`;
    expect((await call("GET", path, { key: a.org.key })).status).toBe(200); // the id is known from here on
    const other = await countedCall("GET", path, b.org.key);
    expect(other.status).toBe(404);
    expect(other.trips).toBe(0); // refused by the campaign's object itself
    expect((await call("GET", path, { key: b.org.key })).json).toEqual({ detail: "Campaign not found" });
    // The object refuses a campaign whose contacts are still being imported by a create, whatever the isolate knows.
    const creating = await seedCampaign(a, { finish: false });
    expect(await creating.stub.progressFor(a.org.id)).toBeNull();
    expect(await campaign.stub.progressFor(b.org.id)).toBeNull();
    expect((await campaign.stub.progressFor(a.org.id))?.campaign_id).toBe(campaign.id);
    expect((await call("GET", `/api/v1/campaign/${creating.id}/progress`, { key: a.org.key })).status).toBe(404);
  });
});
