// D1 round trips per request on the routes bench/api measures, with the API key read from D1 (cold) and from the
// isolate's cache (warm). Printed for bench/api/README.md; the expectations catch a route that starts asking more.
import { afterAll, describe, expect, it } from "vitest";
import { clock } from "../src/lib/clock";
import { clearKeyCache } from "../src/lib/key-cache";
import { seedCampaign, setupOrg } from "./campaigns/support";
import { countedCall } from "./d1-counter";

const rows: string[] = [];
afterAll(() => console.log(`D1 round trips per request\n${rows.join("\n")}`));

describe("D1 round trips per request", () => {
  it("health, campaign progress and a telephony configuration, cold and warm key", async () => {
    const o = await setupOrg();
    const campaign = await seedCampaign(o); // as create leaves it: the D1 row and the object
    const routes: [string, string, number, number][] = [
      // path, label, expected trips with the key read from D1, and from the cache
      ["/api/v1/health", "GET /api/v1/health", 1, 1],
      [`/api/v1/campaign/${campaign.id}/progress`, "GET /api/v1/campaign/{id}/progress", 2, 1],
      [`/api/v1/organizations/telephony-configs/${o.configId}`, "GET /api/v1/organizations/telephony-configs/{id}", 3, 2],
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
    } finally {
      clock.set(null);
    }
  });
});
