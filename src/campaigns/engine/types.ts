// What the campaign object takes and hands back over RPC: plain JSON-able values in the API's field names.
import type { DestinationType, EffectivePolicy } from "../../telephony/destination-policy";
import type { NumberReading } from "../../telephony/numbers";
import type { CampaignState } from "./object-api";
import type { CampaignSettings } from "./settings";

export type LogLevel = "info" | "warning" | "error";
/** JSON values (two levels, not recursive), so the type survives Workers RPC typing (`unknown` maps to `never`). */
type JsonScalar = string | number | boolean | null;
export type Json = JsonScalar | JsonScalar[] | { [k: string]: JsonScalar | JsonScalar[] };
/**
 * What a campaign's import checks its file against, decided once by create (csv/rules.ts applies it): plain data,
 * so a background import stored in the campaign's object applies exactly the rules a request would have.
 */
export type ImportSpec = {
  /** The uploaded file's key in the uploads bucket, and its etag when the campaign was created. */
  key: string;
  etag?: string;
  pbx: boolean;
  /** An ari configuration's dial-string forms (src/telephony/pbx-destinations.ts); absent in specs stored before. */
  pbxTemplates?: string[];
  numbers: NumberReading;
  /** The organization's destination policy when the campaign was created. */
  policy: {
    allowedCountries: string[];
    countriesSource: EffectivePolicy["countriesSource"];
    blockedTypes: DestinationType[];
    allowedNumbers: string[];
  };
  /** The organization's audio greeting ids. */
  recordings: string[];
  /** Template variables the agent uses. */
  requiredVariables: string[];
  /** `on_invalid: "skip"`: rows with problems are left out and kept as a CSV (absent in specs stored before). */
  skipInvalid?: boolean;
};

/** One problem in a file of contacts: a row (header = 1) and the column's name as written, or its position when unnamed. */
export type Problem = {
  row: number;
  column?: string | number;
  msg: string;
  type: string;
  input?: string;
  ctx?: Record<string, unknown>;
};

/** One located problem of a background import, as in a 422's `detail` (typed so it crosses RPC). */
export type ImportItem = { loc: (string | number)[]; msg: string; type: string; input?: string; ctx?: { [k: string]: Json } };
/** Why a background import failed (csv/background.ts). */
export type ImportFailure = { message: string; errors: ImportItem[] };

export type LogEntry = { ts: string; level: LogLevel; event: string; message: string; details: { [k: string]: Json } };

/** Contact and attempt counts. */
export type CampaignCounts = {
  total: number;
  processed: number; // attempted at least once
  completed: number; // final outcome successful: answered, and a conversation took place (or not known)
  answered_no_conversation: number; // answered, but the callee said nothing the agent understood
  failed: number; // no more attempts and not successful
  pending: number; // not yet attempted
  in_progress: number; // attempts dialing or in flight
  awaiting_retry: number; // attempted contacts whose next attempt waits (delay or window)
  executed: number; // attempts made (executed_count)
  queued: number; // attempts made plus attempts waiting (total_queued_count)
  failed_calls: number; // attempts that ended busy, no_answer, voicemail, declined, failed or unknown
  suppressed: number; // not called: on the organization's suppression list when its turn came
};

/** What the calling rules are doing to a campaign (GET progress `calling_rules`). */
export type CallingRulesProgress = {
  /** Contacts ready to call but outside their local hours now. */
  held_local_hours: number;
  /** Dials skipped, by reason: `suppressed` (final), `attempt_cap` (deferred), `local_hours` (held). */
  skipped: Record<string, number>;
  /** Contacts waiting for the organization's attempt cap, and when the first of them may be dialed (ISO). */
  attempt_cap_wait: { contacts: number; next_at: string | null };
};

/** Everything the campaign response object needs from the object. */
export type CampaignSnapshot = {
  id: number;
  org_id: number;
  name: string;
  workflow_id: number;
  telephony_configuration_id: number;
  state: CampaignState;
  source_type: "csv";
  source_id: string;
  settings: CampaignSettings;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  parent_campaign_id: number | null;
  redialed_campaign_id: number | null;
  counts: CampaignCounts;
  next_window_at: string | null;
  logs: LogEntry[]; // newest 100, newest first
  import_error?: ImportFailure | null; // why a background import failed
  import_refused?: { rows: number; truncated: boolean } | null; // rows a background import with on_invalid "skip" left out
};

/** GET /campaign/{id}/progress: both field sets. */
export type CampaignProgress = {
  /** Calls per disposition the voice agent chose. */
  dispositions: Record<string, number>;
  /** Answered calls, those a machine answered (status voicemail), and the share. */
  answering_machines: { answered: number; machines: number; rate: number; amd_classes: Record<string, number> };
  campaign_id: number;
  state: CampaignState;
  total_rows: number;
  imported_rows: number;
  processed_rows: number;
  failed_calls: number;
  progress_percentage: number;
  source_sync: { status: "pending" | "completed" | "failed"; last_synced_at: string | null; error: string | null };
  rate_limit: number;
  started_at: string | null;
  completed_at: string | null;
  total: number;
  processed: number;
  completed: number;
  answered_no_conversation: number;
  failed: number;
  pending: number;
  retry_waiting: number;
  in_progress: number;
  completion_percentage: number;
  next_window_at: string | null;
  calling_rules: CallingRulesProgress;
  /**
   * What holds calls back while the campaign runs: the organization's cap, the deployment's engine capacity, or
   * (nothing else left to dial) the attempt cap until `calling_rules.attempt_cap_wait.next_at`.
   */
  waiting_for: "org_cap" | "engine_capacity" | "attempt_cap" | null;
};

/** A settings change (PATCH): any subset; nested objects are merged over the current values. */
export type { SettingsPatch } from "./settings";

export type LogPage = { items: (LogEntry & { id: number })[]; next_before: number | null };
