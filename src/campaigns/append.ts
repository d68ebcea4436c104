// POST /campaign/{id}/contacts: a second CSV added to an existing campaign. The file is checked exactly as create
// checks it (csv/import.ts with the same rules: header, numbers for the campaign's configuration, greeting
// overrides, the agent's template variables, the organization's destination policy and greetings), its rows are
// staged in the campaign's object, and only a file that passed whole is committed, in one transaction. Numbers
// already in the campaign are skipped and reported; a number twice in the file is a 422, as at create.
import { and, eq, ne } from "drizzle-orm";
import { campaigns } from "../db/schema";
import { getDb } from "../lib/db";
import { ApiError, conflict, notFound, unprocessable } from "../lib/errors";
import { resolveTelephonyConfig } from "../telephony/resolve";
import { keyBelongsTo } from "../uploads/keys";
import { getWorkflow } from "../workflows";
import { fileNotFound, importSpec, rowVariables } from "./create";
import type { RefusedReport } from "./csv/refused";
import { importCsv } from "./csv/import";
import { rulesOf } from "./csv/rules";
import type { CampaignState } from "./engine/object-api";
import { packContacts } from "./engine/packed";
import { unwrap } from "./errors";
import { campaignStub } from "./stub";
import { nextState, refusal } from "./engine/transitions";
import { CREATING } from "./view";

/** `on_invalid` "skip": a partial append (rows with problems left out and returned in `refused`). */
export type AppendInput = { source_url: string; default_country?: string | null; on_invalid?: "reject" | "skip" };

export type AppendOutcome = {
  campaign_id: number;
  state: CampaignState;
  added: number;
  skipped_existing: number;
  skipped_examples: { row: number; phone_number: string }[];
  file_rows: number;
  total_rows: number;
  refused?: RefusedReport | null;
};

/** Adds the file's contacts to `orgId`'s campaign, all or none; throws the contract's errors. */
export async function appendContacts(env: Env, orgId: number, campaignId: number, input: AppendInput): Promise<AppendOutcome> {
  const db = getDb(env);
  // 1. The campaign is the organization's (404, also while a create is still filling it).
  const row = await db
    .select({ workflowId: campaigns.workflowId, telephonyConfigurationId: campaigns.telephonyConfigurationId })
    .from(campaigns)
    .where(and(eq(campaigns.id, campaignId), eq(campaigns.orgId, orgId), ne(campaigns.state, CREATING)))
    .get();
  if (!row) throw notFound("Campaign");
  // 2. It takes contacts now (409 naming its state) before anything is read. The object checks again when the
  //    append opens and when it commits: this is only the early, cheap answer.
  const stub = campaignStub(env, campaignId);
  const { state } = unwrap(await stub.snapshot());
  if (!nextState(state, "append")) throw conflict(refusal(state, "append"));
  // 3. Its agent and configuration, whose rules the rows must meet (gone: a conflict with the campaign, as at start).
  const workflow = await getWorkflow(db, orgId, row.workflowId);
  if (!workflow) throw conflict("Cannot add contacts: the campaign's agent no longer exists");
  if (row.telephonyConfigurationId == null) throw conflict("Cannot add contacts: the campaign's telephony configuration no longer exists");
  const config = await resolveTelephonyConfig(env, orgId, row.telephonyConfigurationId).catch((err) => {
    throw err instanceof ApiError && err.status === 404 ? conflict("Cannot add contacts: the campaign's telephony configuration no longer exists") : err;
  });
  // 4. The file exists under the organization (422); another organization's key is refused without reading it.
  if (!keyBelongsTo(orgId, input.source_url)) throw fileNotFound(input.source_url);
  const spec = await importSpec(db, orgId, input, config, rowVariables(workflow));
  const file = await env.UPLOADS.get(input.source_url);
  if (!file) throw fileNotFound(input.source_url);

  // 5. Every row, as at create, staged in the object; then all of them at once, or none.
  let token: string | null = null;
  try {
    token = unwrap(await stub.beginAppend(orgId)).token;
    const open = token;
    const outcome = await importCsv(file.body, {
      ...rulesOf(spec),
      skipInvalid: input.on_invalid === "skip",
      sink: { importContacts: async (chunk) => unwrap(await stub.stageAppend(open, packContacts(chunk))) },
    });
    if (!outcome.ok) throw unprocessable(outcome.items);
    const done = unwrap(await stub.commitAppend(open, input.source_url));
    token = null;
    return {
      campaign_id: campaignId,
      state: done.state,
      added: done.added,
      skipped_existing: done.skipped_existing,
      skipped_examples: done.skipped_examples,
      file_rows: outcome.rows,
      total_rows: done.total_rows,
      ...(input.on_invalid === "skip" ? { refused: outcome.refused ?? null } : {}),
    };
  } catch (err) {
    await file.body.cancel().catch(() => {});
    // Dropped at once; should this fail too, the batch's timer drops it (it is never dialed either way).
    if (token) await stub.discardAppend(token).catch(() => {});
    throw err;
  }
}
