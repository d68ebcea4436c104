// The campaign object's SQLite schema, versioned. Migrations run in the constructor (under blockConcurrencyWhile);
// each is applied in one transaction and never edited once shipped: add a new entry instead.
import { countersMigration } from "./counts";
import type { Migration } from "../../lib/do-sql";

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
];

export const SCHEMA_VERSION = MIGRATIONS.length;
