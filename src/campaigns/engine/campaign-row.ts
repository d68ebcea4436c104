// The campaign's own row (one, id 1): what the campaign is, its state (written only by state.ts) and bookkeeping.
import type { DoSql } from "../../lib/do-sql";
import type { CampaignState } from "./object-api";

/** Part of migration v1 (shipped: never edited). */
export const CAMPAIGN_TABLE = [
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
];

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

/** The row, or null before the campaign is created (or after a discard). */
export function campaignRow(db: DoSql): CampaignRow | null {
  return db.one<CampaignRow>`SELECT * FROM campaign WHERE id = 1`;
}
