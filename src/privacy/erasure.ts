// An erasure request (POST /organizations/erasure): every trace of one phone number in one organization goes: its
// runs (rows, recordings, details objects, webhook deliveries), its contacts in every campaign object, the lines of
// uploaded campaign files that hold it, the number inside stored responses and audit summaries; and the number is
// suppressed first, so nothing dials it while the rest is removed. Nothing of another organization is read.
import { hmac, toHex } from "../lib/crypto";
import { log } from "../lib/log";
import { FINAL_STATUSES } from "../calls/runs/runs";
import { campaignStub } from "../campaigns/stub";
import { organizationStub } from "../organizations/organization-object";
import { ERASED_NUMBER } from "../campaigns/engine/erase";
import { withoutNumber } from "./erase-lines";

/** Uploaded files read per request at most (an organization with more gets 202: repeat the request). */
export const MAX_FILES_PER_ERASURE = 500;
/** Files larger than this are not rewritten in a request (reported as skipped). */
const MAX_FILE_BYTES = 50 * 1024 * 1024;
/** Campaign objects asked at once. */
const CAMPAIGN_FANOUT = 10;

export type ErasureCounts = {
  runs: number;
  objects: number;
  webhook_deliveries: number;
  campaigns: number;
  contacts: number;
  attempts: number;
  files_rewritten: number;
  files_skipped: number;
};

export type ErasureResult =
  | { status: "live"; live_runs: number; live_campaigns: number }
  | { status: "done" | "partial"; counts: ErasureCounts; files_after: string | null };

/** The number as the audit log names it: a keyed hash, so the log holds no number yet one request can be matched. */
export async function numberRef(secret: string, number: string): Promise<string> {
  return toHex(await hmac(secret, `erasure:${number}`)).slice(0, 32);
}

async function eraseCampaigns(env: Env, orgId: number, number: string) {
  const { results } = await env.DB.prepare("SELECT id FROM campaigns WHERE org_id = ? ORDER BY id").bind(orgId).all<{ id: number }>();
  const out = { campaigns: 0, contacts: 0, attempts: 0, live: 0, runIds: [] as number[] };
  for (let i = 0; i < results.length; i += CAMPAIGN_FANOUT) {
    const answers = await Promise.all(results.slice(i, i + CAMPAIGN_FANOUT).map((c) => campaignStub(env, c.id).eraseNumber(number)));
    for (const r of answers) {
      if (!r.erased) {
        if (r.reason === "live") out.live++;
        continue;
      }
      if (r.contacts) out.campaigns++;
      out.contacts += r.contacts;
      out.attempts += r.attempts;
      out.runIds.push(...r.runIds);
    }
  }
  return out;
}

/** Rewrites the organization's uploaded campaign files without the number's lines, from `after` (a key) on. */
async function eraseFiles(env: Env, orgId: number, number: string, after: string | null) {
  let rewritten = 0;
  let skipped = 0;
  let read = 0;
  let cursor: string | undefined;
  const startAfter = after ?? undefined;
  for (;;) {
    const page = await env.UPLOADS.list({ prefix: `campaigns/${orgId}/`, cursor, startAfter: cursor ? undefined : startAfter, limit: 100 });
    for (const obj of page.objects) {
      if (read >= MAX_FILES_PER_ERASURE) return { rewritten, skipped, next: obj.key };
      read++;
      if (obj.size > MAX_FILE_BYTES) {
        skipped++;
        continue;
      }
      const body = await env.UPLOADS.get(obj.key);
      if (!body) continue;
      const text = await body.text();
      const { text: kept, removed } = withoutNumber(text, number);
      if (!removed) continue;
      await env.UPLOADS.put(obj.key, kept, { httpMetadata: body.httpMetadata, customMetadata: body.customMetadata });
      rewritten++;
    }
    if (!page.truncated) return { rewritten, skipped, next: null };
    cursor = page.cursor;
  }
}

/**
 * Erases `number` (E.164, normalized) from organization `orgId`. `filesAfter` resumes a partial request's file walk.
 * A call to the number still live answers `live` after the suppression (nothing else removed): repeat once it ended.
 */
export async function eraseNumber(env: Env, orgId: number, number: string, filesAfter: string | null = null): Promise<ErasureResult> {
  await organizationStub(env, orgId).suppress([{ number, reason: "erasure request" }], "api");
  const final = JSON.stringify([...FINAL_STATUSES]);
  const { results: runs } = await env.DB.prepare(
    `SELECT id, recording_key, details_key, status IN (SELECT value FROM json_each(?)) AS final
     FROM workflow_runs WHERE org_id = ? AND phone_number = ?`,
  )
    .bind(final, orgId, number)
    .all<{ id: number; recording_key: string | null; details_key: string | null; final: number }>();
  const liveRuns = runs.filter((r) => r.final !== 1).length;
  if (liveRuns) return { status: "live", live_runs: liveRuns, live_campaigns: 0 };

  const campaigns = await eraseCampaigns(env, orgId, number);
  if (campaigns.live) return { status: "live", live_runs: 0, live_campaigns: campaigns.live };

  const keys = runs.flatMap((r) => [r.recording_key, r.details_key]).filter((k): k is string => k != null);
  for (let i = 0; i < keys.length; i += 1000) await env.UPLOADS.delete(keys.slice(i, i + 1000));
  // Runs of this organization only: a campaign's attempt names a run id, which is checked against the org here.
  const runIds = JSON.stringify([...new Set([...runs.map((r) => r.id), ...campaigns.runIds])]);
  const [deliveries, deletedRuns] = await env.DB.batch([
    // Node deliveries by run, event deliveries (to the organization's endpoints) by their payload.
    env.DB.prepare(
      `DELETE FROM webhook_deliveries WHERE org_id = ?1 AND (
         run_id IN (SELECT id FROM workflow_runs WHERE org_id = ?1 AND id IN (SELECT value FROM json_each(?2)))
         OR (endpoint_id IN (SELECT id FROM webhook_endpoints WHERE org_id = ?1) AND instr(payload, ?3) > 0))`,
    ).bind(orgId, runIds, number),
    env.DB.prepare("DELETE FROM workflow_runs WHERE org_id = ?1 AND (phone_number = ?2 OR id IN (SELECT value FROM json_each(?3)))").bind(
      orgId,
      number,
      runIds,
    ),
    // A stored response of an idempotent request (a call started to the number) names it.
    env.DB.prepare("DELETE FROM idempotency_keys WHERE org_id = ? AND instr(response_body, ?) > 0").bind(orgId, number),
    // The audit trail keeps its entries (who did what), with the number taken out.
    env.DB.prepare("UPDATE audit_log SET summary = replace(summary, ?2, ?3) WHERE org_id = ?1 AND instr(summary, ?2) > 0").bind(orgId, number, ERASED_NUMBER),
    env.DB.prepare("UPDATE campaigns SET import_error = replace(import_error, ?2, ?3) WHERE org_id = ?1 AND instr(import_error, ?2) > 0").bind(
      orgId,
      number,
      ERASED_NUMBER,
    ),
    // The suppression list now refuses it, so it need not stay on the always-allowed list either.
    env.DB.prepare(
      `UPDATE calling_policies SET allowed_numbers = (SELECT json_group_array(value) FROM json_each(allowed_numbers) WHERE value <> ?2)
       WHERE org_id = ?1 AND EXISTS (SELECT 1 FROM json_each(allowed_numbers) WHERE value = ?2)`,
    ).bind(orgId, number),
  ]);
  const files = await eraseFiles(env, orgId, number, filesAfter);
  log("info", "erasure_done", { org_id: orgId, runs: runs.length, contacts: campaigns.contacts, files: files.rewritten });
  return {
    status: files.next ? "partial" : "done",
    counts: {
      runs: deletedRuns.meta.changes,
      objects: keys.length,
      webhook_deliveries: deliveries.meta.changes,
      campaigns: campaigns.campaigns,
      contacts: campaigns.contacts,
      attempts: campaigns.attempts,
      files_rewritten: files.rewritten,
      files_skipped: files.skipped,
    },
    files_after: files.next,
  };
}
