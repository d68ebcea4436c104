// What the object answers about itself: the campaign (snapshot), its progress, its contacts with their runs, its log,
// and the finished contacts a redial takes. Read only.
import type { ContactInput } from "./object-api";
import { contactsPage, dispositionCounts, machineCounts, type ContactView } from "./contact-runs";
import { finishedPage } from "./contacts";
import type { CampaignCore } from "./core";
import type { CampaignProgress, CampaignSnapshot, LogPage } from "./types";

export class Reads {
  constructor(private readonly core: CampaignCore) {}

  snapshot(): CampaignSnapshot {
    const { core } = this;
    const c = core.need();
    return {
      id: c.campaign_id,
      org_id: c.org_id,
      name: c.name,
      workflow_id: c.workflow_id,
      telephony_configuration_id: c.telephony_configuration_id,
      state: c.state,
      source_type: "csv",
      source_id: c.source_id,
      settings: core.settings(c),
      created_at: c.created_at,
      started_at: c.started_at,
      completed_at: c.completed_at,
      parent_campaign_id: c.parent_campaign_id,
      redialed_campaign_id: c.redialed_campaign_id,
      counts: core.counts(),
      next_window_at: core.window.nextOpening(c),
      logs: core.log.newest(100),
      import_error: core.imports.failure(),
      import_refused: core.imports.refusedSummary(),
    };
  }

  progress(): CampaignProgress {
    const { core } = this;
    const c = core.need();
    const k = core.counts();
    // Contract 6: exactly processed / total × 100 (0 when total is 0), not rounded: clients round for display.
    const pct = k.total ? (k.processed / k.total) * 100 : 0;
    const capWait = this.capWait();
    return {
      campaign_id: c.campaign_id,
      state: c.state,
      total_rows: k.total,
      imported_rows: k.total,
      processed_rows: k.processed,
      failed_calls: k.failed_calls,
      progress_percentage: pct,
      source_sync: {
        status: c.source_error ? "failed" : c.import_done ? "completed" : "pending",
        last_synced_at: c.source_synced_at,
        error: c.source_error,
      },
      rate_limit: core.settings(c).rate_limit,
      started_at: c.started_at,
      completed_at: c.completed_at,
      total: k.total,
      processed: k.processed,
      completed: k.completed,
      answered_no_conversation: k.answered_no_conversation,
      failed: k.failed,
      pending: k.pending,
      retry_waiting: k.awaiting_retry,
      in_progress: k.in_progress,
      completion_percentage: pct,
      next_window_at: core.window.nextOpening(c),
      dispositions: dispositionCounts(core.db),
      answering_machines: machineCounts(core.db),
      calling_rules: { held_local_hours: core.hours.held(), skipped: core.hours.skips(), attempt_cap_wait: capWait },
      waiting_for: this.waitingFor(c.state, c.blocked, capWait.contacts),
    };
  }

  /** Contacts waiting for the attempt cap (their `cap_wait` timers) and the soonest it lets one go. */
  private capWait(): { contacts: number; next_at: string | null } {
    const r = this.core.db.one<{ n: number; at: number | null }>`SELECT count(*) AS n, min(due) AS at FROM timers WHERE kind = 'cap_wait'`;
    return { contacts: r?.n ?? 0, next_at: r?.at != null ? new Date(r.at).toISOString() : null };
  }

  /**
   * The cap or the engines when a dial was refused for them; else the attempt cap when its waiters are all that is
   * left to dial (a campaign at "1000 of 1001" says why it has not completed).
   */
  private waitingFor(state: string, blocked: string | null, capWaiting: number): CampaignProgress["waiting_for"] {
    if (state !== "running") return null;
    if (blocked === "org_cap" || blocked === "engine_capacity") return blocked;
    if (!capWaiting) return null;
    return this.core.db.one`SELECT 1 AS x FROM contacts WHERE status IN ('queued', 'active') LIMIT 1` ? null : "attempt_cap";
  }

  /** progress() for `orgId`'s campaign once created; null otherwise (a create or redial fills a `draft` until finishImport). */
  progressFor(orgId: number): CampaignProgress | null {
    const c = this.core.campaign();
    if (!c || c.org_id !== orgId || (c.state === "draft" && !c.import_done)) return null;
    return this.progress();
  }

  /** Contacts in row order with their attempts' runs and dispositions, a page after contact id `after`. */
  contacts(after: number, limit: number, withContext: boolean): { items: ContactView[]; next: number | null } {
    this.core.need();
    return contactsPage(this.core.db, after, limit, withContext);
  }

  /** Logs newest first, `limit` per page, continuing below log id `before`. */
  logs(limit: number, before: number | null): LogPage {
    this.core.need();
    return this.core.log.page(limit, before);
  }

  /** One page of the contacts whose final outcome is in `outcomes`, in contact order after `afterId`. */
  redialContacts(outcomes: string[], afterId: number, limit: number): { contacts: ContactInput[]; next: number | null } {
    this.core.need();
    return finishedPage(this.core.db, outcomes, afterId, limit);
  }
}
