// Redial: from a completed or cancelled campaign, a new draft child with the contacts whose final
// outcome is in `outcomes`. Made like any campaign: a hidden D1 row, the child object filled in chunks, then the
// row shown as `draft`; any failure removes the child. The parent links to its newest child. Repeatable.
import { and, eq } from "drizzle-orm";
import { campaigns } from "../db/schema";
import { auditStatement } from "../lib/audit";
import { isoNow } from "../lib/clock";
import { getDb } from "../lib/db";
import { conflict } from "../lib/errors";
import { CREATING } from "./view";
import { unwrap } from "./errors";
import { campaignStub } from "./stub";

const PAGE = 1000;

export const CONFIG_GONE = "Cannot redial: the campaign's telephony configuration no longer exists (it was deleted); create a new campaign instead";

/**
 * `configId` is the parent's configuration as D1 has it now (the route checked it still exists). The redial is
 * recorded as the key `apiKeyId`'s, which also counts as the child's creator (null: made outside the API).
 */
export async function redialCampaign(env: Env, parentId: number, outcomes: string[], configId: number, apiKeyId: number | null = null): Promise<number> {
  const parent = campaignStub(env, parentId);
  const plan = unwrap(await parent.redialPlan(outcomes));
  const db = getDb(env);
  const name = `${plan.meta.name} (redial)`.slice(0, 255);
  const row = await db
    .insert(campaigns)
    .values({
      orgId: plan.meta.orgId,
      name,
      workflowId: plan.meta.workflowId,
      telephonyConfigurationId: configId,
      state: CREATING,
      sourceType: "csv",
      sourceId: plan.meta.sourceId,
      settings: plan.meta.settings,
      parentCampaignId: parentId,
      createdByKeyId: apiKeyId,
    })
    .returning({ id: campaigns.id })
    .get()
    .catch((err: unknown) => {
      // Deleted between the route's check and this insert: the foreign key refuses it.
      if (/FOREIGN KEY constraint failed/i.test(String((err as { cause?: unknown })?.cause ?? "") + String(err))) throw conflict(CONFIG_GONE);
      throw err;
    });
  const childId = row.id;
  const child = campaignStub(env, childId);
  try {
    unwrap(await child.initialize({ ...plan.meta, telephonyConfigurationId: configId, name, campaignId: childId, parentCampaignId: parentId }));
    let after = 0;
    for (;;) {
      const page = unwrap(await parent.redialContacts(outcomes, after, PAGE));
      if (page.contacts.length) unwrap(await child.importContacts(page.contacts));
      if (page.next == null) break;
      after = page.next;
    }
    const { total } = unwrap(await child.finishImport());
    await db.batch([
      db
        .update(campaigns)
        .set({ state: "draft", totalRows: total, totalQueuedCount: total, updatedAt: isoNow() })
        .where(and(eq(campaigns.id, childId), eq(campaigns.state, CREATING))),
      auditStatement(
        db,
        { orgId: plan.meta.orgId, apiKeyId },
        { action: "redial", resourceType: "campaign", resourceId: parentId, summary: { redialed_campaign_id: childId, outcomes, total_rows: total } },
      ),
    ]);
    unwrap(await parent.linkRedial(childId, total));
    return childId;
  } catch (err) {
    await child.discard().catch(() => undefined);
    await db
      .delete(campaigns)
      .where(and(eq(campaigns.id, childId), eq(campaigns.state, CREATING)))
      .run();
    throw err;
  }
}
