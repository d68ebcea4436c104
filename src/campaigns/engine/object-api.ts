// Types the campaign records and the campaign engine share. What campaigns and calls exchange lives in
// calls/campaign/campaign-calls.ts, the lease API in organizations/leases.ts.
import type { GreetingOverride } from "../../calls/campaign/campaign-calls";
import type { CampaignSettings } from "./settings";

export type { GreetingOverride };

/** `importing`: contacts are being imported in the background (create with `import: "background"`); then `draft`. */
export type CampaignState = "importing" | "draft" | "running" | "paused" | "completed" | "cancelled" | "failed";

/** What the campaign object is created with (from POST /campaign/create). */
export type CampaignMeta = {
  campaignId: number;
  orgId: number;
  name: string;
  workflowId: number;
  telephonyConfigurationId: number;
  sourceId: string;
  settings: CampaignSettings;
  parentCampaignId?: number | null;
};

/** One validated CSV row, as it lands in the campaign object's storage. */
export type ContactInput = {
  row: number; // spreadsheet row number (header = 1)
  phone_number: string; // normalized
  initial_context: Record<string, string>;
  greeting_override: GreetingOverride;
};
