// Contracts between the campaign records (issue 5), the campaign engine (issue 6) and the calls module (issue 7).
// Types only: each side implements its half.
import type { CampaignSettings } from "./settings";
import type { CallStatus } from "../telephony/providers/types";

export type CampaignState = "draft" | "running" | "paused" | "completed" | "cancelled" | "failed";

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

export type GreetingOverride =
  | { type: "text"; text: string }
  | { type: "audio"; recordingId: string }
  | null;

/** One validated CSV row, as it lands in the campaign object's storage. */
export type ContactInput = {
  row: number; // spreadsheet row number (header = 1)
  phone_number: string; // normalized
  initial_context: Record<string, string>;
  greeting_override: GreetingOverride;
};

/** A call the engine asks the calls module to start (the calls module's single entry point). */
export type CampaignCallRequest = {
  orgId: number;
  campaignId: number;
  contactId: number;
  attempt: number;
  workflowId: number;
  telephonyConfigurationId: number;
  phoneNumber: string;
  initialContext: Record<string, string>;
  greetingOverride: GreetingOverride;
  /**
   * The organization lease (OrganizationObject) the engine already holds for this call, named
   * `campaign:{campaignId}:{contactId}:{attempt}`. The calls module must not take a second one for it; releasing it on
   * the final status is safe (release is idempotent) and the engine releases it too.
   */
  leaseId?: string;
};

export type CallStartResult =
  | { ok: true; runId: number; providerCallId: string | null }
  | { ok: false; runId: number | null; message: string; kind: "carrier_refused" | "invalid_number" | "destination_refused" | "capacity" | "config" };

/** A status the calls module forwards to the owning campaign object (idempotent, possibly duplicated or reordered). */
export type CampaignCallStatus = {
  runId: number;
  contactId: number;
  attempt: number;
  status: CallStatus;
  at: string; // ISO time the carrier reported it
};

/** The organization object's lease API on the shared concurrent-call cap. */
export type LeaseRequest = {
  leaseId: string;
  ttlSeconds: number;
  /** A campaign id to wake (its `wake()` RPC) when a slot frees after this request was refused. */
  waiter?: number;
  /**
   * A single call (not a campaign's dial): it also takes a token from the organization's and the key's call-start
   * buckets, checked before the cap. `keyId` null (no key known) counts against the organization only.
   */
  callStart?: { keyId: number | null };
};
/** `rateLimited`: refused by a call-start bucket (`Rate limit exceeded`), not by the cap. */
export type LeaseResult = { granted: boolean; inUse: number; cap: number; retryAfterSeconds?: number; rateLimited?: boolean };
