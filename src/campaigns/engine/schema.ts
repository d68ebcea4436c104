// The campaign object's SQLite schema, versioned, and the row types of its tables. Migrations run in the constructor
// (migrateOnStart, under blockConcurrencyWhile); each is applied in one transaction and never edited once shipped:
// add a new entry instead.
import type { Migration } from "../../lib/do-sql";
import type { CampaignState } from "../object-api";
import { CONTACT_RUNS_MIGRATION } from "./contact-runs";
import { countersMigration, countersRebuild } from "./counts";
import { RECIPIENT_HOURS_MIGRATION } from "./recipient-hours";
import { STAGED_MIGRATION } from "./staged";

/** The one `campaign` row (id 1): what the campaign is, its state (written only by state.ts) and bookkeeping. */
export type CampaignRow = {
  campaign_id: number;
  org_id: number;
  name: string;
  workflow_id: number;
  telephony_configuration_id: number;
  source_id: string;
  parent_campaign_id: number | null;
  redialed_campaign_id: number | null;
  state: CampaignState;
  settings: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  import_done: number;
  source_synced_at: string | null;
  source_error: string | null;
  breaker_since: number;
  window_open: number | null;
  blocked: string | null;
  summary_dirty: number;
  summary_at: number;
};

export type ContactStatus = "queued" | "waiting" | "active" | "done" | "skipped";

export type ContactRow = {
  id: number;
  row: number;
  phone_number: string;
  initial_context: string;
  greeting_override: string | null;
  status: ContactStatus;
  attempts: number;
  queue_key: number;
  outcome: string | null;
  zone_id?: number | null;
};

export type AttemptRow = {
  id: number;
  contact_id: number;
  attempt: number;
  status: string;
  last_status: string | null;
  run_id: number | null;
  provider_call_id: string | null;
  lease_id: string | null;
  dialed_at: number;
  ended_at: number | null;
  failure: number;
  error: string | null;
};

export type TimerKind = "window" | "retry" | "timeout" | "dispatch" | "summary" | "import" | "staged";
export type TimerRow = { kind: TimerKind; ref: number; due: number; fails: number };

export type LogRow = { id: number; ts: string; level: string; event: string; message: string; details: string };

export const MIGRATIONS: readonly Migration[] = [
  // v1
  [
    `CREATE TABLE campaign (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      campaign_id INTEGER NOT NULL,
      org_id INTEGER NOT NULL,
      name TEXT NOT NULL,
      workflow_id INTEGER NOT NULL,
      telephony_configuration_id INTEGER NOT NULL,
      source_id TEXT NOT NULL,
      parent_campaign_id INTEGER,
      redialed_campaign_id INTEGER,
      state TEXT NOT NULL,
      settings TEXT NOT NULL,
      created_at TEXT NOT NULL,
      started_at TEXT,
      completed_at TEXT,
      import_done INTEGER NOT NULL DEFAULT 0,
      source_synced_at TEXT,
      source_error TEXT,
      breaker_since INTEGER NOT NULL DEFAULT 0,
      window_open INTEGER,
      blocked TEXT,
      summary_dirty INTEGER NOT NULL DEFAULT 1,
      summary_at INTEGER NOT NULL DEFAULT 0
    )`,
    // status: queued (ready to dial) | waiting (retry timer) | active (an attempt is open) | done | skipped (cancelled)
    `CREATE TABLE contacts (
      id INTEGER PRIMARY KEY,
      row INTEGER NOT NULL,
      phone_number TEXT NOT NULL UNIQUE,
      initial_context TEXT NOT NULL,
      greeting_override TEXT,
      status TEXT NOT NULL DEFAULT 'queued',
      attempts INTEGER NOT NULL DEFAULT 0,
      queue_key INTEGER NOT NULL,
      outcome TEXT
    )`,
    `CREATE INDEX contacts_queue ON contacts (status, queue_key)`,
    // status: dialing (recorded before the carrier is asked) | in_flight | a final call status
    `CREATE TABLE attempts (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      contact_id INTEGER NOT NULL,
      attempt INTEGER NOT NULL,
      status TEXT NOT NULL,
      last_status TEXT,
      run_id INTEGER,
      provider_call_id TEXT,
      lease_id TEXT,
      dialed_at INTEGER NOT NULL,
      ended_at INTEGER,
      failure INTEGER NOT NULL DEFAULT 0,
      error TEXT,
      UNIQUE (contact_id, attempt)
    )`,
    `CREATE INDEX attempts_status ON attempts (status)`,
    `CREATE INDEX attempts_ended ON attempts (ended_at)`,
    `CREATE INDEX attempts_dialed ON attempts (dialed_at)`,
    // One alarm serves them all: the earliest `due` is the alarm time.
    `CREATE TABLE timers (
      kind TEXT NOT NULL,
      ref INTEGER NOT NULL,
      due INTEGER NOT NULL,
      fails INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (kind, ref)
    )`,
    `CREATE INDEX timers_due ON timers (due)`,
    `CREATE TABLE logs (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      ts TEXT NOT NULL,
      level TEXT NOT NULL,
      event TEXT NOT NULL,
      message TEXT NOT NULL,
      details TEXT NOT NULL
    )`,
  ],
  // v2: counts kept by triggers instead of scanning every contact on each read.
  countersMigration(),
  // v3: the voice agent's dispositions, per attempt and counted.
  CONTACT_RUNS_MIGRATION,
  // v4: calling rules: each contact's zone (the recipient's local hours), skipped dials counted, `suppressed` counted.
  [...RECIPIENT_HOURS_MIGRATION, ...countersRebuild()],
  // v5: contacts appended to an existing campaign, staged until their whole file has passed.
  STAGED_MIGRATION,
];

export const SCHEMA_VERSION = MIGRATIONS.length;
