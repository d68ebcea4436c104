// The Worker: the HTTP app plus the Durable Object classes wrangler binds.
import { app } from "./app";

export { CampaignObject } from "./campaigns/campaign-object";
export { OrganizationObject } from "./organizations/organization-object";
export { AriEventsObject } from "./calls/ari-events";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
