// The campaign response object: the D1 summary row (identity, names, links) overlaid with the
// campaign object's snapshot (state, counts, settings, times, newest logs), which is the source of truth.
import { z } from "@hono/zod-openapi";
import { and, eq, ne } from "drizzle-orm";
import { campaigns, telephonyConfigs, workflows } from "../db/schema";
import { getDb } from "../lib/db";
import { notFound } from "../lib/errors";
import { ValidationErrorSchema } from "../lib/schemas";
import { unwrap } from "./errors";
import { campaignStub } from "./stub";
import type { CampaignSnapshot } from "./engine/types";
import type { CampaignState } from "./engine/object-api";
import { SETTINGS_VIEW, completeSettings } from "./engine/settings";
import { log } from "../lib/log";

/**
 * State of a summary row whose campaign a request is still creating (its contacts imported before it answers):
 * hidden from every read. Not a campaign state; a background import is visible as `importing`.
 */
export const CREATING = "creating";

export const CAMPAIGN_STATES = ["importing", "draft", "running", "paused", "completed", "cancelled", "failed"] as const satisfies readonly CampaignState[];

export const CampaignLog = z
  .object({
    ts: z.string(),
    level: z.enum(["info", "warning", "error"]),
    event: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
  })
  .openapi("CampaignLog");
export type CampaignLog = z.infer<typeof CampaignLog>;

export const CampaignImportError = z
  .object({
    message: z.string().openapi({ description: "Why the import failed, in one sentence" }),
    errors: ValidationErrorSchema.shape.detail.openapi({
      description:
        'The file\'s problems located as a synchronous create reports them in its 422 (`loc: ["body", "source_url", row, column]`, at most 100, the total in the first item\'s `ctx.total_errors`); empty when the failure was not about the file\'s content',
    }),
  })
  .openapi("CampaignImportError");

export const Campaign = z
  .object({
    id: z.number().int(),
    name: z.string(),
    workflow_id: z.number().int(),
    workflow_name: z.string(),
    state: z.enum(CAMPAIGN_STATES),
    source_type: z.string(),
    source_id: z.string().openapi({ description: "The uploaded file's key (given as `source_url` on create)" }),
    total_rows: z.number().int(),
    imported_rows: z.number().int().openapi({
      description: "Contacts imported so far: counts up while the state is `importing` (a background import), then equals total_rows",
    }),
    import_error: CampaignImportError.nullable().openapi({
      description: "Why a background import failed (the campaign is then `failed`, with no contacts); null otherwise",
    }),
    import_refused: z
      .object({
        rows: z.number().int().openapi({ description: "Rows left out" }),
        truncated: z.boolean().openapi({ description: "True when more rows were left out than the CSV holds (10,000 at most, or 4 MB)" }),
      })
      .nullable()
      .optional()
      .openapi({
        description:
          'A background import with `on_invalid: "skip"` that left rows out: how many (GET /campaign/{id}/refused.csv returns them with the reason of each); null otherwise. In GET /campaign/{id} and the answers of operations, not in listings',
      }),
    processed_rows: z.number().int(),
    failed_rows: z.number().int(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    ...SETTINGS_VIEW,
    executed_count: z.number().int(),
    total_queued_count: z.number().int(),
    parent_campaign_id: z.number().int().nullable(),
    redialed_campaign_id: z.number().int().nullable(),
    telephony_configuration_id: z.number().int().nullable(),
    telephony_configuration_name: z.string().nullable(),
    created_by_key_id: z.number().int().nullable().openapi({ description: "The API key that created the campaign (by create or redial)" }),
    logs: z.array(CampaignLog).openapi({ description: "The newest 100 log entries, newest first; `GET /campaign/{id}/logs` pages them all" }),
  })
  .openapi("Campaign");
export type Campaign = z.infer<typeof Campaign>;

type SummaryRow = typeof campaigns.$inferSelect & { workflowName: string; telephonyConfigurationName: string | null };

/** The response object from the D1 summary alone (used by listings, and when the object cannot answer). */
export function summaryView(r: SummaryRow): Campaign {
  const settings = completeSettings(r.settings);
  return {
    id: r.id,
    name: r.name,
    workflow_id: r.workflowId,
    workflow_name: r.workflowName,
    state: r.state as CampaignState,
    source_type: r.sourceType,
    source_id: r.sourceId,
    total_rows: r.totalRows,
    imported_rows: r.totalRows,
    import_error: (r.importError as Campaign["import_error"]) ?? null,
    processed_rows: r.processedRows,
    failed_rows: r.failedRows,
    created_at: r.createdAt,
    started_at: r.startedAt,
    completed_at: r.completedAt,
    ...settings,
    executed_count: r.executedCount,
    total_queued_count: r.totalQueuedCount,
    parent_campaign_id: r.parentCampaignId,
    redialed_campaign_id: r.redialedCampaignId,
    telephony_configuration_id: r.telephonyConfigurationId,
    telephony_configuration_name: r.telephonyConfigurationName,
    created_by_key_id: r.createdByKeyId,
    logs: [],
  };
}

/** Overlays the object's live snapshot on the summary: the object owns state, counts, settings and logs. */
export function withSnapshot(base: Campaign, snap: CampaignSnapshot): Campaign {
  return {
    ...base,
    name: snap.name,
    state: snap.state,
    total_rows: snap.counts.total,
    imported_rows: snap.counts.total,
    import_error: snap.import_error ?? null,
    import_refused: snap.import_refused ?? null,
    processed_rows: snap.counts.processed,
    failed_rows: snap.counts.failed,
    executed_count: snap.counts.executed,
    total_queued_count: snap.counts.queued,
    started_at: snap.started_at,
    completed_at: snap.completed_at,
    parent_campaign_id: snap.parent_campaign_id ?? base.parent_campaign_id,
    redialed_campaign_id: snap.redialed_campaign_id ?? base.redialed_campaign_id,
    ...completeSettings(snap.settings),
    logs: snap.logs.slice(0, 100),
  };
}

/** D1 select of summary rows with the agent's and configuration's names. */
export function selectSummaries(env: Env) {
  return getDb(env)
    .select({
      c: campaigns,
      workflowName: workflows.name,
      telephonyConfigurationName: telephonyConfigs.name,
    })
    .from(campaigns)
    .innerJoin(workflows, eq(workflows.id, campaigns.workflowId))
    .leftJoin(telephonyConfigs, eq(telephonyConfigs.id, campaigns.telephonyConfigurationId));
}

export const flattenSummary = (r: { c: typeof campaigns.$inferSelect; workflowName: string; telephonyConfigurationName: string | null }): SummaryRow => ({
  ...r.c,
  workflowName: r.workflowName,
  telephonyConfigurationName: r.telephonyConfigurationName,
});

/**
 * The full campaign object, or 404 `Campaign not found` (also for another organization's id).
 * Start, pause and the other engine routes return this.
 */
export async function campaignView(env: Env, orgId: number, campaignId: number): Promise<Campaign> {
  const row = await selectSummaries(env)
    .where(and(eq(campaigns.id, campaignId), eq(campaigns.orgId, orgId), ne(campaigns.state, CREATING)))
    .get();
  if (!row) throw notFound("Campaign");
  const base = summaryView(flattenSummary(row));
  let snap: CampaignSnapshot;
  try {
    snap = unwrap(await campaignStub(env, campaignId).snapshot());
  } catch (err) {
    // The summary row is still a truthful (if slightly older) answer; the failure is logged, not hidden.
    log("warning", "campaign_snapshot_failed", { campaign_id: campaignId, error: String(err) });
    return base;
  }
  return withSnapshot(base, snap);
}
