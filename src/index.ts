// The Worker: the HTTP app, the cron's cleanup, plus the Durable Object classes wrangler binds.
import { app } from "./app";
import { sweepAbandonedImports } from "./campaigns/sweep";
import { clock } from "./lib/clock";

export { CampaignObject } from "./campaigns/campaign-object";
export { OrganizationObject } from "./organizations/organization-object";
export { AriEventsObject } from "./calls/ari-events";

export default {
  fetch: app.fetch,
  // The cron in wrangler.toml ([triggers]): removes campaign imports a dead Worker left half done.
  async scheduled(_controller, env, _ctx) {
    await sweepAbandonedImports(env, clock.now());
  },
} satisfies ExportedHandler<Env>;
