// The one source of the D1 schema. Migrations in migrations/ are generated from this file by drizzle-kit.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;
const createdAt = () => text("created_at").notNull().default(now);
const updatedAt = () => text("updated_at").notNull().default(now);
const bool = (name: string) => integer(name, { mode: "boolean" });

export const organizations = sqliteTable("organizations", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull(),
  createdAt: createdAt(),
});

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id")
      .notNull()
      .references(() => organizations.id),
    name: text("name").notNull(),
    // SHA-256 of the full key, hex; the key itself is never stored.
    keyHash: text("key_hash").notNull(),
    keyLast4: text("key_last4").notNull(),
    createdAt: createdAt(),
    revokedAt: text("revoked_at"),
    // Written by authentication at most about once a minute per key (src/lib/auth.ts), so not a write per request.
    lastUsedAt: text("last_used_at"),
  },
  (t) => [uniqueIndex("api_keys_hash_uq").on(t.keyHash), index("api_keys_org_idx").on(t.orgId)],
);

export const telephonyConfigs = sqliteTable(
  "telephony_configs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id")
      .notNull()
      .references(() => organizations.id),
    name: text("name").notNull(),
    provider: text("provider").notNull(),
    isDefaultOutbound: bool("is_default_outbound").notNull().default(false),
    // Non-sensitive fields of the provider variant, as JSON.
    config: text("config", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    // Sensitive fields: JSON map of dotted field path -> AES-GCM envelope {kid, iv, ct}.
    secrets: text("secrets", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    // Provider-managed state (provisioned application ids, last provisioning error, ...).
    state: text("state", { mode: "json" }).notNull().$type<Record<string, unknown>>().default(sql`'{}'`),
    inactive: bool("inactive").notNull().default(false),
    inactiveSince: text("inactive_since"),
    inactiveReason: text("inactive_reason"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("telephony_configs_org_name_uq").on(t.orgId, t.name),
    // At most one default per organization, enforced by the database itself.
    uniqueIndex("telephony_configs_org_default_uq").on(t.orgId).where(sql`is_default_outbound = 1`),
  ],
);

export const phoneNumbers = sqliteTable(
  "phone_numbers",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id")
      .notNull()
      .references(() => organizations.id),
    configId: integer("config_id")
      .notNull()
      .references(() => telephonyConfigs.id, { onDelete: "cascade" }),
    address: text("address").notNull(),
    label: text("label"),
    isActive: bool("is_active").notNull().default(true),
    isDefaultCallerId: bool("is_default_caller_id").notNull().default(false),
    // The agent that answers calls to this number (null: the number takes no calls; the caller hears why).
    inboundWorkflowId: integer("inbound_workflow_id").references(() => workflows.id),
    // The attachment takes only an agent version that passed its test suite (docs/agent-tests.md).
    inboundRequirePassingTests: bool("inbound_require_passing_tests").notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("phone_numbers_org_address_uq").on(t.orgId, t.address),
    index("phone_numbers_config_idx").on(t.configId),
    // At most one default caller ID per configuration, enforced by the database itself.
    uniqueIndex("phone_numbers_config_default_uq").on(t.configId).where(sql`is_default_caller_id = 1`),
  ],
);

export const workflows = sqliteTable(
  "workflows",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id")
      .notNull()
      .references(() => organizations.id),
    uuid: text("uuid").notNull(),
    name: text("name").notNull(),
    status: text("status").notNull().default("active"),
    currentDefinitionId: integer("current_definition_id"),
    versionNumber: integer("version_number").notNull().default(1),
    templateContextVariables: text("template_context_variables", { mode: "json" }).notNull().$type<Record<string, unknown>>().default(sql`'{}'`),
    callDispositionCodes: text("call_disposition_codes", { mode: "json" }).notNull().$type<Record<string, unknown>>().default(sql`'{"disposition_codes":[]}'`),
    workflowConfigurations: text("workflow_configurations", { mode: "json" }).notNull().$type<Record<string, unknown>>().default(sql`'{}'`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("workflows_uuid_uq").on(t.uuid), index("workflows_org_idx").on(t.orgId)],
);

export const workflowDefinitions = sqliteTable(
  "workflow_definitions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workflowId: integer("workflow_id")
      .notNull()
      .references(() => workflows.id),
    versionNumber: integer("version_number").notNull(),
    definition: text("definition", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("workflow_definitions_version_uq").on(t.workflowId, t.versionNumber)],
);

// API Trigger paths of each agent's current definition, so a path resolves to one agent per organization.
export const workflowTriggers = sqliteTable(
  "workflow_triggers",
  {
    orgId: integer("org_id")
      .notNull()
      .references(() => organizations.id),
    triggerPath: text("trigger_path").notNull(),
    workflowId: integer("workflow_id")
      .notNull()
      .references(() => workflows.id),
    // When this agent claimed the path: the first claimer owns a path that two agents' definitions share.
    claimedAt: text("claimed_at").notNull().default(""),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.triggerPath, t.workflowId] }), index("workflow_triggers_wf_idx").on(t.workflowId)],
);

export const campaigns = sqliteTable(
  "campaigns",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id")
      .notNull()
      .references(() => organizations.id),
    name: text("name").notNull(),
    workflowId: integer("workflow_id")
      .notNull()
      .references(() => workflows.id),
    telephonyConfigurationId: integer("telephony_configuration_id").references(() => telephonyConfigs.id),
    state: text("state").notNull().default("draft"),
    sourceType: text("source_type").notNull().default("csv"),
    sourceId: text("source_id").notNull(),
    totalRows: integer("total_rows").notNull().default(0),
    processedRows: integer("processed_rows").notNull().default(0),
    failedRows: integer("failed_rows").notNull().default(0),
    executedCount: integer("executed_count").notNull().default(0),
    totalQueuedCount: integer("total_queued_count").notNull().default(0),
    // retry_config, max_concurrency, rate_limit, schedule_config, circuit_breaker as one JSON object.
    settings: text("settings", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    parentCampaignId: integer("parent_campaign_id"),
    redialedCampaignId: integer("redialed_campaign_id"),
    // The API key that created it (by create or redial); null when made outside the API.
    createdByKeyId: integer("created_by_key_id"),
    // Why a background import failed (message and located problems), for listings; the campaign object has it too.
    importError: text("import_error", { mode: "json" }).$type<{ message: string; errors: unknown[] }>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    startedAt: text("started_at"),
    completedAt: text("completed_at"),
  },
  (t) => [index("campaigns_org_idx").on(t.orgId, t.id), index("campaigns_config_idx").on(t.telephonyConfigurationId)],
);

export const workflowRuns = sqliteTable(
  "workflow_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id")
      .notNull()
      .references(() => organizations.id),
    name: text("name").notNull(),
    workflowId: integer("workflow_id")
      .notNull()
      .references(() => workflows.id),
    workflowUuid: text("workflow_uuid").notNull(),
    definitionId: integer("definition_id"),
    campaignId: integer("campaign_id"),
    // The campaign's own contact id and attempt number, so a status reaches the right attempt.
    contactId: integer("contact_id"),
    attempt: integer("attempt"),
    phoneNumber: text("phone_number").notNull(),
    fromNumber: text("from_number"),
    initialContext: text("initial_context", { mode: "json" }).notNull().$type<Record<string, unknown>>().default(sql`'{}'`),
    telephonyConfigurationId: integer("telephony_configuration_id"),
    provider: text("provider"),
    providerCallId: text("provider_call_id"),
    status: text("status").notNull().default("queued"),
    answeredBy: text("answered_by"),
    error: text("error"),
    createdAt: createdAt(),
    startedAt: text("started_at"),
    answeredAt: text("answered_at"),
    endedAt: text("ended_at"),
    durationSeconds: integer("duration_seconds"),
    // The organization lease this call holds (a single call's own, or the campaign engine's), freed on the final status.
    leaseId: text("lease_id"),
    // A campaign contact's greeting override ({type:"text",text} | {type:"audio",recordingId}), null = the Start greeting.
    greetingOverride: text("greeting_override", { mode: "json" }).$type<Record<string, unknown> | null>(),
    // Why the call did something other than asked (e.g. an audio override spoken as the text greeting).
    notes: text("notes"),
    // Why the call ended (the session's reason, else one read from the carrier's final status), once it has.
    endReason: text("end_reason"),
    // The API key that started it: a single call's caller, or for a campaign's call the key that created the campaign.
    createdByKeyId: integer("created_by_key_id"),
    // The call's two-channel recording in the uploads bucket (G.711 µ-law under a .ulaw key, raw 16-bit PCM under an
    // older .pcm one; served as a 16-bit WAV), once the call ended.
    recordingKey: text("recording_key"),
    recordingRate: integer("recording_rate"),
    // The call's turns as its session logged them (who, text, start and end on the call's clock), once it ended.
    transcript: text("transcript", { mode: "json" }).$type<StoredTurn[] | null>(),
    // What the voice agent gathered (the nodes' extraction variables), the disposition it chose, and what the call
    // cost in speech and tokens, once its session ended.
    gatheredContext: text("gathered_context", { mode: "json" }).$type<Record<string, unknown> | null>(),
    disposition: text("disposition"),
    usage: text("usage", { mode: "json" }).$type<AgentUsage | null>(),
    // What the campaign wants done when an answering machine answers (hang_up | leave_message); null: hang up.
    voicemailAction: text("voicemail_action"),
    // Who started the call: edgedial dialing out (campaign, API, trigger), a caller dialing in, or a browser.
    direction: text("direction").notNull().default("outbound"),
    // The hand-over to a person, once the agent asked for one: destination, mode, when and how it went.
    transfer: text("transfer", { mode: "json" }).$type<Record<string, unknown> | null>(),
    // The post-call analysis the agent defines (summary, structured data, success and why), once it ran.
    analysis: text("analysis", { mode: "json" }).$type<Record<string, unknown> | null>(),
    // The HTTP tools the model called during the call: name, arguments, status, duration.
    toolCalls: text("tool_calls", { mode: "json" }).$type<Array<Record<string, unknown>> | null>(),
    // The run's bulk (transcript with timing, tool calls, usage detail, analysis) as one object in the uploads bucket,
    // written once when the run is final; null while the run is live (or for rows from before the move).
    detailsKey: text("details_key"),
    // Each reply's timing figures of the call, so an agent's latency is aggregated from D1 without reading one details
    // object per run: [replies, per-figure histograms] (src/calls/session/latency-record.ts), bounded whatever the
    // call's length; rows written before it hold {replies, figures: {name: [ms...]}}.
    latency: text("latency", { mode: "json" }).$type<Array<number | number[]> | { replies: number; figures: Record<string, number[]> } | null>(),
    // The analysis' outcome (ok | failed) once it ran, its body being in the details object: it runs once per run.
    analysisStatus: text("analysis_status"),
    // A call of an agent test (src/agent-tests/): over the carrier simulator only, and never counted in campaigns,
    // caps, cost estimates or analytics, nor listed by default.
    isTest: bool("is_test").notNull().default(false),
    // What the call's media carried, by its session (src/calls/session/call-facts.ts): {caller_audio_s, agent_audio_s,
    // gaps, underruns} (~70 B), and whether a conversation took place (a callee turn transcribed non-empty).
    media: text("media", { mode: "json" }).$type<{ caller_audio_s: number; agent_audio_s: number; gaps: number; underruns: number } | null>(),
    conversation: integer("conversation", { mode: "boolean" }),
    // Who answered an outbound call as the agent judged it (human, machine_greeting, beep, ivr_menu, call_screening,
    // fax_tone, silence; docs/answering-machines.md), once the call ended; its evidence is in the details object.
    amdClass: text("amd_class"),
  },
  (t) => [
    uniqueIndex("workflow_runs_name_uq").on(t.name),
    index("workflow_runs_wf_idx").on(t.workflowId, t.id),
    index("workflow_runs_campaign_idx").on(t.campaignId),
    // Calls not yet final per configuration: deleting a configuration is refused while it has any (small, partial).
    // Erasure by phone number within an organization.
    index("workflow_runs_org_phone_idx").on(t.orgId, t.phoneNumber),
    // Rows whose bulk is still in D1 (from before the details objects): the cron's migration finds them without a scan.
    index("workflow_runs_bulk_in_d1_idx")
      .on(t.id)
      .where(sql`details_key is null and (transcript is not null or tool_calls is not null or analysis is not null)`),
    index("workflow_runs_live_config_idx").on(t.telephonyConfigurationId).where(sql`status in ('queued', 'initiated', 'ringing', 'in_progress')`),
  ],
);

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    orgId: integer("org_id").notNull(),
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    // null while the first request is still in progress.
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.scope, t.key] })],
);

// An organization's destination policy (toll fraud). No row, or a null list, means the default: the countries of its
// caller IDs, and the high-cost number types refused (src/telephony/destination-policy.ts).
export const callingPolicies = sqliteTable("calling_policies", {
  orgId: integer("org_id")
    .primaryKey()
    .references(() => organizations.id),
  // ISO 3166 alpha-2 codes, or null for the default.
  allowedCountries: text("allowed_countries", { mode: "json" }).$type<string[] | null>(),
  // Number types refused, or null for the default.
  blockedNumberTypes: text("blocked_number_types", { mode: "json" }).$type<string[] | null>(),
  // E.164 numbers dialed whatever their country or type.
  allowedNumbers: text("allowed_numbers", { mode: "json" }).notNull().$type<string[]>().default(sql`'[]'`),
  // Whether PBX URLs (ari_endpoint, external_pbx) may point at loopback, private, CGNAT or local names (SSRF guard).
  allowPrivatePbx: integer("allow_private_pbx", { mode: "boolean" }).notNull().default(false),
  // Whether answered calls are recorded (both sides, to R2).
  recordCalls: integer("record_calls", { mode: "boolean" }).notNull().default(true),
  // Campaign calls only within the recipient's local hours: {enabled, start, end}, or null for 08:00–21:00 on.
  localHours: text("local_hours", { mode: "json" }).$type<{ enabled: boolean; start: string; end: string } | null>(),
  // Campaign dials to one number across campaigns in a rolling window: {enabled, max_attempts, window_hours}, or
  // null for the default (3 in 24 hours).
  attemptCap: text("attempt_cap", { mode: "json" }).$type<{ enabled: boolean; max_attempts: number; window_hours: number } | null>(),
  // How long a run's data is kept, in days per kind ({recordings_days, transcripts_days, runs_days}, each null =
  // forever), or null for forever; an agent may override it (workflow_configurations.retention).
  retention: text("retention", { mode: "json" }).$type<Record<string, number | null> | null>(),
  // Whether stored transcripts are redacted of personal data (card numbers, emails, phone numbers, sensitive variables).
  redactPii: integer("redact_pii", { mode: "boolean" }).notNull().default(false),
  updatedAt: updatedAt(),
});

// Who changed what (contract: accountability): one row per change made through the API, newest last. `summary` is a
// small non-secret description (names, changed field names), never a secret or a whole request body.
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id").notNull(),
    apiKeyId: integer("api_key_id"),
    action: text("action").notNull(),
    resourceType: text("resource_type").notNull(),
    resourceId: integer("resource_id"),
    summary: text("summary", { mode: "json" }).notNull().$type<Record<string, unknown>>().default(sql`'{}'`),
    createdAt: createdAt(),
  },
  (t) => [index("audit_log_org_idx").on(t.orgId, t.id)],
);

// Nonces (or once-only ids) of verified carrier callback signatures, per configuration and scheme, kept for
// the signature's validity window: a repeat is refused as a replay. The primary key makes the claim atomic.
export const callbackNonces = sqliteTable(
  "callback_nonces",
  {
    configId: integer("config_id").notNull(),
    scheme: text("scheme").notNull(),
    nonce: text("nonce").notNull(),
    // epoch ms after which the signature would be refused anyway, so the row can go
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.configId, t.scheme, t.nonce] }), index("callback_nonces_expires_idx").on(t.expiresAt)],
);

// Audio greetings an organization uploaded (the recordings `greeting_override_recording_id` names): the audio is in
// R2 under `key`, normalized to mono 16-bit PCM WAV at its own rate.
/** One transcript turn as a run stores it (its details object; older rows' transcript column) and the API shows it. */
export type StoredTurn = {
  role: string;
  text: string;
  start_ms: number;
  end_ms: number;
  interrupted: boolean;
  // An agent turn's timing (src/agent/voice-agent.ts TurnTiming), on runs from when it was measured.
  timing?: Record<string, number | string>;
};

/** A call's cost figures: seconds of speech transcribed and synthesized, and the model's tokens. */
export type AgentUsage = { stt_seconds: number; tts_seconds: number; input_tokens: number; output_tokens: number };

export const greetingRecordings = sqliteTable(
  "greeting_recordings",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id")
      .notNull()
      .references(() => organizations.id),
    recordingId: text("recording_id").notNull(),
    name: text("name").notNull(),
    key: text("key").notNull(),
    sampleRate: integer("sample_rate").notNull(),
    durationMs: integer("duration_ms").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("greeting_recordings_org_recording_uq").on(t.orgId, t.recordingId)],
);

// Webhook endpoints (src/webhooks): where an organization wants events sent, and the secret their deliveries are
// signed with (a SecretBox envelope; the plaintext is shown once, at create and at rotation).
export const webhookEndpoints = sqliteTable(
  "webhook_endpoints",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id")
      .notNull()
      .references(() => organizations.id),
    url: text("url").notNull(),
    description: text("description"),
    // The subscribed event types, as a JSON array.
    events: text("events", { mode: "json" }).notNull().$type<string[]>(),
    enabled: bool("enabled").notNull().default(true),
    secret: text("secret", { mode: "json" }).notNull().$type<{ kid: string; iv: string; ct: string }>(),
    secretLast4: text("secret_last4").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("webhook_endpoints_org_idx").on(t.orgId, t.id)],
);

// One event for one endpoint: the exact body and webhook-id, kept so a redelivery sends the same message.
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id").notNull(),
    endpointId: integer("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    // The Standard Webhooks message id (webhook-id), the receiver's idempotency key.
    messageId: text("message_id").notNull(),
    event: text("event").notNull(),
    payload: text("payload").notNull(),
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    lastResponseStatus: integer("last_response_status"),
    lastError: text("last_error"),
    // An agent's webhook node: its run and node, and the node's own URL (signed with the endpoint's secret, logged
    // under it); null for an event delivery, which goes to the endpoint's URL.
    runId: integer("run_id"),
    nodeId: text("node_id"),
    url: text("url"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("webhook_deliveries_endpoint_idx").on(t.endpointId, t.id), index("webhook_deliveries_run_idx").on(t.runId)],
);

// An agent's test scenarios (src/agent-tests/schemas.ts): the scenario's body as sent, one row per scenario, each
// stamped with the agent's version when it was last saved; a run copies the scenarios it ran.
export const agentTestScenarios = sqliteTable(
  "agent_test_scenarios",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id").notNull(),
    workflowId: integer("workflow_id")
      .notNull()
      .references(() => workflows.id),
    name: text("name").notNull(),
    spec: text("spec", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    revision: integer("revision").notNull().default(1),
    agentVersion: integer("agent_version").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("agent_test_scenarios_name_uq").on(t.workflowId, t.name), index("agent_test_scenarios_org_idx").on(t.orgId, t.workflowId)],
);

// A run of an agent's suite (or of one scenario) against one version of the agent: its results, once finished, are
// that version's last test result (what a campaign's require_passing_tests asks).
export const agentTestRuns = sqliteTable(
  "agent_test_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id").notNull(),
    workflowId: integer("workflow_id")
      .notNull()
      .references(() => workflows.id),
    versionNumber: integer("version_number").notNull(),
    // null: the whole suite; else the one scenario run.
    scenarioId: integer("scenario_id"),
    repetitions: integer("repetitions").notNull(),
    // running | passed | failed | error
    status: text("status").notNull().default("running"),
    results: text("results", { mode: "json" }).$type<Record<string, unknown> | null>(),
    createdAt: createdAt(),
    finishedAt: text("finished_at"),
  },
  (t) => [index("agent_test_runs_version_idx").on(t.workflowId, t.versionNumber, t.id), index("agent_test_runs_org_idx").on(t.orgId, t.id)],
);
