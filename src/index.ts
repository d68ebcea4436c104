// The Worker: the HTTP app, the cron's cleanup, plus the Durable Object classes wrangler binds.
import { app } from "./app";
import { sweepAbandonedImports } from "./campaigns/sweep";
import { MAX_CALL_SECONDS, TIMEOUT_GRACE_SECONDS } from "./calls/call-length";
import { sweepOverdueRuns } from "./calls/run-sweep";
import { isAfterCall, runAfterCalls } from "./calls/post-call";
import { migrateRunDetails } from "./calls/run-details";
import { clock } from "./lib/clock";
import { deliverWebhooks } from "./webhooks/deliver";
import { purgeExpired } from "./privacy/purge";

export { CampaignObject } from "./campaigns/campaign-object";
export { OrganizationObject } from "./organizations/organization-object";
export { AriEventsObject } from "./calls/ari-events";
export { CallSession } from "./calls/call-session";
export { EngineCapacityObject } from "./capacity/engine-capacity-object";

export default {
  fetch: app.fetch,
  // The WEBHOOKS queue (wrangler.jsonc): signed deliveries to organizations' webhook endpoints.
  // The same queue carries each ended call's after-call work (analysis, the agent's webhook nodes).
  queue: async (batch, env) => {
    const after = batch.messages.filter((m) => isAfterCall(m.body));
    const deliveries = after.length ? { ...batch, messages: batch.messages.filter((m) => !isAfterCall(m.body)) } : batch;
    await Promise.all([deliverWebhooks(deliveries, env), runAfterCalls(after, env)]);
  },
  // The cron in wrangler.jsonc (triggers): removes campaign imports a dead Worker left half done, and hangs up
  // and ends calls that outlived max_call_seconds (so no run stays open and no lease is held), and purges the data
  // retention expired (privacy/purge.ts, daily per organization, in batches).
  async scheduled(_controller, env, _ctx) {
    await sweepAbandonedImports(env, clock.now());
    await sweepOverdueRuns(env, clock.now(), { maxCallSeconds: MAX_CALL_SECONDS, graceSeconds: TIMEOUT_GRACE_SECONDS });
    // Runs from before the details objects: a bounded batch moved to R2 each time.
    await migrateRunDetails(env);
    await purgeExpired(env, clock.now());
  },
} satisfies ExportedHandler<Env>;
