// The campaign's row in D1 (`campaigns`), which listings read: a mirror of the object's state and counts, written
// at transitions and at most every SUMMARY_INTERVAL_MS while counts change, never per call.
import { eq } from "drizzle-orm";
import { campaigns } from "../../db/schema";
import { clock } from "../../lib/clock";
import { getDb } from "../../lib/db";
import { emitCampaignStateChange } from "../../webhooks/campaign-events";
import type { DoSql } from "../../lib/do-sql";
import { campaignRow } from "./campaign-row";
import { readCounts } from "./counts";
import type { Timers } from "./timers";
import { log } from "../../lib/log";
import { iso } from "../../lib/helpers";

/** How often (at most) the D1 summary row is refreshed while counts change. */
export const SUMMARY_INTERVAL_MS = 5000;

export class SummaryMirror {
  /** Write at the next flush whatever the interval (a transition happened). */
  private forced = false;
  /** When the summary timer is set for (null: not set), so an unchanged one costs no write. */
  private timerAt: number | null = null;

  constructor(
    private readonly db: DoSql,
    private readonly timers: Timers,
    private readonly env: Env,
  ) {}

  /** The next flush writes the row now (a transition: listings must see it at once). */
  force(): void {
    this.forced = true;
  }

  /** The summary timer is gone (it fired, or storage was wiped). */
  timerGone(): void {
    this.timerAt = null;
  }

  /**
   * Writes the row when forced or when it changed and the interval has passed; otherwise keeps a timer for it.
   * `writeDue` false: only a forced write happens now; one that is merely due is left to its timer (the alarm).
   */
  async flush(writeDue = true): Promise<void> {
    const c = campaignRow(this.db);
    if (!c) return;
    const now = clock.now();
    const force = this.forced;
    if (!force && (!c.summary_dirty || now - c.summary_at < SUMMARY_INTERVAL_MS || !writeDue)) {
      const due = Math.max(c.summary_at + SUMMARY_INTERVAL_MS, writeDue ? 0 : now);
      if (c.summary_dirty && (this.timerAt == null || this.timerAt > due)) {
        this.timers.atMost("summary", 0, due);
        this.timerAt = due;
      }
      return;
    }
    this.forced = false;
    const k = readCounts(this.db);
    // Cleared before the write: a change made while D1 answers marks it dirty again.
    this.db.run`UPDATE campaign SET summary_dirty = 0, summary_at = ${now}`;
    this.timers.clear("summary");
    this.timerAt = null;
    try {
      const db = getDb(this.env);
      // The state D1 showed before this write, in the same batch: a change is a webhook event.
      const [[before]] = await db.batch([
        db.select({ state: campaigns.state, orgId: campaigns.orgId }).from(campaigns).where(eq(campaigns.id, c.campaign_id)),
        db
          .update(campaigns)
          .set({
            name: c.name,
            state: c.state,
            totalRows: k.total,
            processedRows: k.processed,
            failedRows: k.failed,
            executedCount: k.executed,
            totalQueuedCount: k.queued,
            settings: JSON.parse(c.settings),
            startedAt: c.started_at,
            completedAt: c.completed_at,
            // A redial child is linked here; the row's own value stays when the object has none.
            ...(c.redialed_campaign_id != null ? { redialedCampaignId: c.redialed_campaign_id } : {}),
            updatedAt: iso(now),
          })
          .where(eq(campaigns.id, c.campaign_id)),
      ]);
      if (before) await emitCampaignStateChange(this.env, before.orgId, c.campaign_id, before.state, c.state);
    } catch (err) {
      log("warning", "campaign_summary_failed", { campaign_id: c.campaign_id, error: String(err) });
      this.db.run`UPDATE campaign SET summary_dirty = 1`;
      this.timers.atMost("summary", 0, now + SUMMARY_INTERVAL_MS);
      if (force) this.forced = true;
    }
  }
}
