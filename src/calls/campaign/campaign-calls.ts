// What the campaign engine and the calls module exchange: the engine asks for a call and hears its statuses.
// Types only; campaigns import them from here (campaigns -> calls), calls never import campaigns.
import type { CallStatus } from "../../telephony/providers/types";

export type GreetingOverride = { type: "text"; text: string } | { type: "audio"; recordingId: string } | null;

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
  /** When an answering machine answers: end the call, or leave the greeting as a message after the tone. */
  voicemailAction?: "hang_up" | "leave_message";
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

/** One campaign call: its run and the attempt it is. */
export type CampaignCallRef = { runId: number; contactId: number; attempt: number };

/** A status the calls module forwards to the owning campaign object (idempotent, possibly duplicated or reordered). */
export type CampaignCallStatus = CampaignCallRef & {
  status: CallStatus;
  at: string; // ISO time the carrier reported it
  /** With a final status: whether the call session heard a conversation (the run's `conversation`; null: not known). */
  conversation?: boolean | null;
};

/**
 * The disposition the voice agent chose for a campaign call, told to its campaign when the call's session ends, or
 * after the call by its analysis (which may add when the callee asked to be called back: `call_back_later`); and from
 * the session, who answered as the agent judged it (`amdClass`: human, machine_greeting, ivr_menu, ..., where it did).
 */
export type RunOutcome = CampaignCallRef & { disposition: string | null; callbackAt?: string | null; amdClass?: string | null };
