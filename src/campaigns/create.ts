// POST /campaign/create: the checks in their order, then the campaign made in one piece. Synchronously (the default)
// the D1 summary row is written first as `creating` (invisible to every read), the contacts stream into the
// campaign's object, and only a complete import turns the row into a `draft`; any failure removes both. With
// `import: "background"` the campaign answers at once as `importing` and its object imports the file itself
// (csv/background.ts), ending as `draft`, or `failed` with the reason and the rows' problems.
import { and, eq, sql, type SQL } from "drizzle-orm";
import { campaigns } from "../db/schema";
import { auditStatement, type Actor } from "../lib/audit";
import { isoNow } from "../lib/clock";
import { getDb, type Db } from "../lib/db";
import { invalid, unprocessable } from "../lib/errors";
import { loadCallingPolicy } from "../telephony/calling-policy";
import { pbxTemplatesOf } from "../telephony/pbx-destinations";
import { classifyE164 } from "../telephony/numbers";
import { callerIdOf, resolveTelephonyConfig } from "../telephony/resolve";
import { greetingIds } from "../uploads/greetings";
import { keyBelongsTo } from "../uploads/keys";
import { loadUsableWorkflow, templateVariables, variablesWithoutDefault } from "../workflows";
import { importCsv } from "./csv/import";
import type { RefusedReport } from "./csv/refused";
import { rulesOf, specPolicy } from "./csv/rules";
import type { ImportSpec } from "./engine/types";
import type { CampaignMeta } from "./engine/object-api";
import { packContacts } from "./engine/packed";
import type { CampaignSettings } from "./engine/settings";
import { CREATING } from "./view";
import { unwrap } from "./errors";
import { campaignStub } from "./stub";
import { log } from "../lib/log";

export type CreateInput = {
  name: string;
  workflow_id: number;
  source_url: string;
  telephony_configuration_id?: number | null;
  /** ISO 3166 alpha-2: the file's national numbers are read as this country's and stored in E.164. */
  default_country?: string | null;
  /** "background": answer at once as `importing` and import in the campaign's object. */
  import?: "sync" | "background";
  /** "skip": a partial import (rows with problems left out: returned, or kept with a background import's campaign). */
  on_invalid?: "reject" | "skip";
  settings: CampaignSettings;
};

/** A created campaign's id, and with on_invalid "skip" the rows left out (null when none was). */
export type Created = { id: number; refused?: RefusedReport | null };

export const fileNotFound = (key: string) =>
  invalid(
    ["body", "source_url"],
    "No uploaded file with this key in your organization: upload it first (POST /s3/presigned-upload-url)",
    "file_not_found",
    key,
  );

/**
 * Runs every check of a campaign create in order and creates the campaign, recorded as `actor`'s; returns its id. Throws
 * the contract's errors.
 */
export async function createCampaign(env: Env, orgId: number, input: CreateInput, actor: Actor): Promise<Created> {
  const db = getDb(env);
  const skip = input.on_invalid === "skip";
  // 1. The agent exists (404) and is active (409).
  const workflow = await loadUsableWorkflow(db, orgId, input.workflow_id);
  // 2. A telephony configuration resolves (404 for an unknown explicit id, 409 when none is the default).
  const config = await resolveTelephonyConfig(env, orgId, input.telephony_configuration_id);
  // 3. The file exists under the organization. Another organization's key is refused without reading it.
  if (!keyBelongsTo(orgId, input.source_url)) throw fileNotFound(input.source_url);
  const background = input.import === "background";
  // In the background the campaign's object reads the file; here only its existence is checked.
  const file = background ? await env.UPLOADS.head(input.source_url) : await env.UPLOADS.get(input.source_url);
  if (!file) throw fileNotFound(input.source_url);
  const body = "body" in file ? (file as R2ObjectBody).body : null;

  // 4 and 5 (the CSV, then the agent's template variables) need the campaign's storage for duplicates.
  let spec: ImportSpec;
  let campaignId: number;
  try {
    spec = { ...(await importSpec(db, orgId, input, config, rowVariables(workflow))), etag: file.etag, ...(skip ? { skipInvalid: true } : {}) };
    const row = await db
      .insert(campaigns)
      .values({
        orgId,
        name: input.name,
        workflowId: workflow.id,
        telephonyConfigurationId: config.id,
        state: background ? "importing" : CREATING,
        sourceType: "csv",
        sourceId: input.source_url,
        settings: input.settings,
        createdByKeyId: actor.apiKeyId,
      })
      .returning({ id: campaigns.id })
      .get();
    campaignId = row.id;
  } catch (err) {
    await body?.cancel().catch(() => {});
    throw err;
  }
  const meta: CampaignMeta = {
    campaignId,
    orgId,
    name: input.name,
    workflowId: workflow.id,
    telephonyConfigurationId: config.id,
    sourceId: input.source_url,
    settings: input.settings,
  };
  const audited = (extra: Record<string, unknown>, when?: SQL) =>
    auditStatement(
      db,
      actor,
      {
        action: "create",
        resourceType: "campaign",
        resourceId: campaignId,
        summary: { name: input.name, workflow_id: workflow.id, telephony_configuration_id: config.id, source_url: input.source_url, ...extra },
      },
      when,
    );

  if (background) {
    try {
      unwrap(await campaignStub(env, campaignId).beginImport(meta, spec));
      await audited({ import: "background" }, sql`1`);
      return { id: campaignId };
    } catch (err) {
      // Not announced yet, but its object may already have moved it on (a tiny file): removed whatever its state.
      await discardCampaign(env, campaignId, null);
      throw err;
    }
  }

  const stub = campaignStub(env, campaignId);
  try {
    unwrap(await stub.initialize(meta));
    const outcome = await importCsv(body!, {
      ...rulesOf(spec),
      skipInvalid: skip,
      sink: { importContacts: async (chunk) => unwrap(await stub.importPacked(packContacts(chunk))) },
    });
    if (!outcome.ok) throw unprocessable(outcome.items);
    const { total } = unwrap(await stub.finishImport());
    // Committed: from here on the campaign is visible. Guarded on `creating` so nothing else's write is undone.
    const [[done]] = await db.batch([
      db
        .update(campaigns)
        .set({ state: "draft", totalRows: total, totalQueuedCount: total, updatedAt: isoNow() })
        .where(and(eq(campaigns.id, campaignId), eq(campaigns.state, CREATING)))
        .returning({ id: campaigns.id }),
      audited({ total_rows: total, ...(skip ? { refused_rows: outcome.refused?.rows ?? 0 } : {}) }),
    ]);
    if (!done) throw new Error(`campaign ${campaignId} summary row vanished during import`);
    return skip ? { id: campaignId, refused: outcome.refused ?? null } : { id: campaignId };
  } catch (err) {
    await body?.cancel().catch(() => {});
    await discardCampaign(env, campaignId, CREATING);
    throw err;
  }
}

/** The variables each row must give, not blank: those the agent uses and gives no default (template_context_variables). */
export function rowVariables(workflow: { definition: unknown; templateContextVariables: unknown }): string[] {
  return variablesWithoutDefault(templateVariables(workflow.definition), workflow.templateContextVariables);
}

/** The rules the file is checked by, decided now (the background import applies them later; an append, at once). */
export async function importSpec(
  db: Db,
  orgId: number,
  input: Pick<CreateInput, "source_url" | "default_country">,
  config: Awaited<ReturnType<typeof resolveTelephonyConfig>>,
  requiredVariables: string[],
): Promise<ImportSpec> {
  // Without default_country, a national number's row error suggests its form in the caller ID's country.
  const from = input.default_country || config.provider.pbx ? null : callerIdOf(config);
  return {
    key: input.source_url,
    pbx: config.provider.pbx,
    pbxTemplates: pbxTemplatesOf(config) ?? undefined,
    numbers: { defaultCountry: input.default_country, suggestCountry: from ? classifyE164(from)?.country : null },
    policy: specPolicy((await loadCallingPolicy(db, orgId)).effective),
    recordings: [...(await greetingIds(db, orgId))],
    requiredVariables,
  };
}

/** Undoes a create that did not finish: the object's storage wiped, the summary row deleted (if still in `state`). */
async function discardCampaign(env: Env, campaignId: number, state: string | null): Promise<void> {
  try {
    await campaignStub(env, campaignId).discard();
  } catch (err) {
    // The row goes anyway, so the leftover object is unreachable; log it for cleanup.
    log("error", "campaign_discard_failed", { campaign_id: campaignId, error: String(err) });
  }
  await getDb(env)
    .delete(campaigns)
    .where(and(eq(campaigns.id, campaignId), state === null ? undefined : eq(campaigns.state, state)))
    .run();
}
