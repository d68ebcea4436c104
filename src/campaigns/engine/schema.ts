// The campaign object's SQLite schema, versioned: each table's module owns its statements and row type; this list only
// orders them. Migrations run in the constructor (migrateOnStart, under blockConcurrencyWhile); each is applied in one
// transaction and never edited once shipped (test/campaigns/engine/migrations.test.ts pins them): add a new entry.
import type { Migration } from "../../lib/do-sql";
import { ATTEMPTS_TABLE } from "./attempts";
import { CAMPAIGN_TABLE } from "./campaign-row";
import { CONTACTS_TABLE } from "./contacts";
import { LOGS_TABLE } from "./logs";
import { TIMERS_TABLE } from "./timers";
import { ATTEMPT_AMD_CLASS, CONTACT_RUNS_MIGRATION } from "./contact-runs";
import { countersMigration, countersRebuild, countersRebuildV6 } from "./counts";
import { ATTEMPT_CONVERSATION } from "./conversations";
import { REFUSED_ROWS_TABLE } from "./refused-rows";
import { RECIPIENT_HOURS_MIGRATION } from "./recipient-hours";
import { STAGED_MIGRATION } from "./staged";

export const MIGRATIONS: readonly Migration[] = [
  // v1: the tables, each from its own module (in this order).
  [...CAMPAIGN_TABLE, ...CONTACTS_TABLE, ...ATTEMPTS_TABLE, ...TIMERS_TABLE, ...LOGS_TABLE],
  // v2: counts kept by triggers instead of scanning every contact on each read.
  countersMigration(),
  // v3: the voice agent's dispositions, per attempt and counted.
  CONTACT_RUNS_MIGRATION,
  // v4: calling rules: each contact's zone (the recipient's local hours), skipped dials counted, `suppressed` counted.
  [...RECIPIENT_HOURS_MIGRATION, ...countersRebuild()],
  // v5: contacts appended to an existing campaign, staged until their whole file has passed.
  STAGED_MIGRATION,
  // v6: answered calls with no conversation: each attempt's conversation, `answered_no_conversation` counted apart.
  [ATTEMPT_CONVERSATION, ...countersRebuildV6()],
  // v7: the rows a background import with on_invalid "skip" leaves out.
  REFUSED_ROWS_TABLE,
  // v8: who answered each attempt's call as the agent judged it (its answering-machine class), counted per class.
  ATTEMPT_AMD_CLASS,
];

export const SCHEMA_VERSION = MIGRATIONS.length;
