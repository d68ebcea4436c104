// Dialing the contacts a round chose: each attempt recorded `dialing` before anyone is asked to call (exactly once),
// the calling rules' skips applied, then the call started through the calls module and its answer recorded.
import type { CallStartResult, CampaignCallRequest } from "../../calls/campaign/campaign-calls";
import { clock } from "../../lib/clock";
import type { LeaseResult } from "../../organizations/leases";
import type { AttemptRow } from "./attempts";
import { startCampaignCallVia } from "./call-starter";
import type { CampaignRow } from "./campaign-row";
import type { ContactRow } from "./contacts";
import type { CampaignCore } from "./core";
import type { AttemptEndings } from "./endings";
import type { OrgLeases } from "./leases";
import type { StateMoves } from "./moves";
import { CALL_TIMEOUT_MS, ORG_RETRY_FALLBACK_MS, leaseIdFor } from "./round";
import { transition } from "./state";

export type Dialing = { attempt: AttemptRow; contact: ContactRow };

export class Dial {
  /** Starts the carrier accepted, [attempt id, run id, call id], written together once this turn's answers are in. */
  private readonly accepted: [number, number, string | null][] = [];

  constructor(
    private readonly core: CampaignCore,
    private readonly moves: StateMoves,
    private readonly endings: AttemptEndings,
    private readonly leases: OrgLeases,
  ) {}

  /**
   * The exactly-once step: each chosen contact's attempt exists as `dialing` (with its timeout) before anyone is asked
   * to call. A round's contacts in a fixed number of statements (per-row statements cost most of a round's time); a
   * contact no longer queued, or whose lease names another attempt, is left out and its lease added to `unused`.
   */
  record(chosen: { contactId: number; leaseId: string }[], now: number, unused: string[]): Dialing[] {
    if (!chosen.length) return [];
    const { db } = this.core;
    const campaignId = this.core.need().campaign_id;
    const ids = JSON.stringify(chosen.map((ch) => ch.contactId));
    const queued = new Map<number, ContactRow>();
    for (const ct of db.all<ContactRow>`SELECT * FROM contacts WHERE id IN (SELECT value FROM json_each(${ids})) AND status = 'queued'`) queued.set(ct.id, ct);
    const go: [number, number, string][] = [];
    for (const ch of chosen) {
      const contact = queued.get(ch.contactId);
      if (contact && ch.leaseId === leaseIdFor(campaignId, ch.contactId, contact.attempts + 1)) go.push([ch.contactId, contact.attempts + 1, ch.leaseId]);
      else unused.push(ch.leaseId);
    }
    if (!go.length) return [];
    const rows = JSON.stringify(go);
    const attempts = db.all<AttemptRow>`INSERT INTO attempts (contact_id, attempt, status, lease_id, dialed_at)
      SELECT value ->> 0, value ->> 1, 'dialing', value ->> 2, ${now} FROM json_each(${rows}) ORDER BY key RETURNING *`;
    db.run`UPDATE contacts SET status = 'active', attempts = attempts + 1 WHERE id IN (SELECT value ->> 0 FROM json_each(${rows}))`;
    this.core.timers.setMany(
      "timeout",
      attempts.map((a) => a.id),
      now + CALL_TIMEOUT_MS,
    );
    this.core.markDirty();
    const byContact = new Map(attempts.map((a) => [a.contact_id, a]));
    return go.map(([contactId]) => {
      this.core.pace.record(now);
      return { attempt: byContact.get(contactId)!, contact: queued.get(contactId)! };
    });
  }

  /**
   * Dials a calling rule refused: a suppressed number is never called (final `suppressed`), one over the attempt
   * cap waits until the cap allows it (no attempt used). Each is counted and logged with its reason.
   */
  applySkips(skipped: { contact: Pick<ContactRow, "id" | "phone_number">; lease: LeaseResult }[], now: number): void {
    const { db, log } = this.core;
    for (const { contact, lease } of skipped) {
      const where = { contact_id: contact.id, phone_number: contact.phone_number };
      if (lease.skip === "suppressed") {
        if (!db.run`UPDATE contacts SET status = 'done', outcome = 'suppressed' WHERE id = ${contact.id} AND status = 'queued'`) continue;
        log.write("info", "dial_skipped", `${contact.phone_number} is on the organization's suppression list; not called`, { ...where, reason: "suppressed" });
      } else {
        const at = Math.max(now + 1000, lease.retryAt ?? now + ORG_RETRY_FALLBACK_MS);
        if (!db.run`UPDATE contacts SET status = 'waiting' WHERE id = ${contact.id} AND status = 'queued'`) continue;
        this.core.timers.set("cap_wait", contact.id, at);
        log.write(
          "info",
          "dial_skipped",
          `${contact.phone_number} reached the organization's attempt cap; the call waits until ${new Date(at).toISOString()}`,
          {
            ...where,
            reason: "attempt_cap",
            retry_at: new Date(at).toISOString(),
          },
        );
      }
      this.core.hours.countSkip(lease.skip!, 1);
      this.core.markDirty();
    }
    if (skipped.length && this.moves.checkCompletion(now)) this.core.summary.force();
  }

  /** Asks the calls module to start the call, then records its answer. */
  async start(c: CampaignRow, a: AttemptRow, ct: ContactRow): Promise<void> {
    const req: CampaignCallRequest = {
      orgId: c.org_id,
      campaignId: c.campaign_id,
      contactId: ct.id,
      attempt: a.attempt,
      workflowId: c.workflow_id,
      telephonyConfigurationId: c.telephony_configuration_id,
      phoneNumber: ct.phone_number,
      initialContext: JSON.parse(ct.initial_context),
      greetingOverride: ct.greeting_override ? JSON.parse(ct.greeting_override) : null,
      voicemailAction: this.core.settings(c).voicemail_action,
      leaseId: a.lease_id ?? undefined,
    };
    let result: CallStartResult | null = null;
    let thrown: unknown = null;
    try {
      result = await startCampaignCallVia(this.core.env, req);
    } catch (err) {
      thrown = err;
    }
    await this.answered(c, a, ct, result, thrown);
  }

  private async answered(c: CampaignRow, a: AttemptRow, ct: ContactRow, r: CallStartResult | null, thrown: unknown): Promise<void> {
    const { db, log } = this.core;
    const now = clock.now();
    const where = { contact_id: ct.id, phone_number: ct.phone_number, attempt: a.attempt };
    if (!r) {
      // We cannot know whether the carrier was asked: when in doubt, don't dial again.
      const fresh = db.one<AttemptRow>`SELECT * FROM attempts WHERE id = ${a.id}`!;
      if (await this.endings.finish(fresh, "unknown", now, { noRetry: true, error: String(thrown) }))
        log.write("error", "dial_failed", `Starting the call to ${ct.phone_number} failed unexpectedly; it may have been placed, so it is not retried`, {
          ...where,
          error: String(thrown),
        });
      return;
    }
    if (r.ok) {
      // One statement for the answers that come in the same turn (a round's starts answer together), not one per
      // call; it runs before anything that awaits this start (the queue of microtasks is first in, first out).
      if (this.accepted.push([a.id, r.runId, r.providerCallId]) === 1) queueMicrotask(() => this.recordAccepted());
      return;
    }
    if (r.kind === "capacity" || r.kind === "config") {
      // Nothing reached a carrier: the attempt is taken back and the contact queues again.
      const undone = db.tx(() => {
        const n = db.run`DELETE FROM attempts WHERE id = ${a.id} AND status = 'dialing'`;
        if (!n) return false;
        db.run`UPDATE contacts SET status = 'queued', attempts = attempts - 1 WHERE id = ${ct.id} AND status = 'active'`;
        this.core.timers.clear("timeout", a.id);
        this.core.markDirty();
        if (r.kind === "capacity") {
          this.moves.noteBlocked("org_cap", { granted: false, inUse: -1, cap: -1 });
          this.core.timers.atMost("dispatch", 0, now + ORG_RETRY_FALLBACK_MS);
        } else {
          log.write("error", "dial_failed", `Cannot start calls: ${r.message}`, { ...where, kind: r.kind, error: r.message });
          if (this.core.need().state === "running") {
            transition(db, "pause", now);
            log.write("warning", "campaign_paused", "Campaign paused until the configuration is fixed; resume to continue", {
              reason: "configuration",
              error: r.message,
            });
            this.moves.clearRunningTimers();
            this.core.summary.force();
          }
        }
        return true;
      });
      if (undone && a.lease_id) await this.leases.release(c.org_id, [a.lease_id], true);
      return;
    }
    // The carrier refused or the number is invalid: a final `failed`, never retried, and a breaker failure.
    if (r.runId != null) db.run`UPDATE attempts SET run_id = coalesce(run_id, ${r.runId}) WHERE id = ${a.id}`;
    const fresh = db.one<AttemptRow>`SELECT * FROM attempts WHERE id = ${a.id}`!;
    await this.endings.finish(fresh, "failed", now, { error: r.message });
    // Logged even when the run's own `failed` status already finished the attempt (it reaches the campaign
    // before this reply does): the log is where an operator reads why the carrier refused.
    log.write("warning", "dial_failed", `The call to ${ct.phone_number} was not placed: ${r.message}`, {
      ...where,
      kind: r.kind,
      run_id: r.runId,
      error: r.message,
    });
  }

  private recordAccepted(): void {
    const calls = this.accepted.splice(0);
    const rows = JSON.stringify(calls);
    try {
      this.core.db.run`UPDATE attempts SET status = CASE WHEN status = 'dialing' THEN 'in_flight' ELSE status END,
        run_id = coalesce(run_id, j.value ->> 1), provider_call_id = coalesce(provider_call_id, j.value ->> 2)
        FROM json_each(${rows}) AS j WHERE attempts.id = j.value ->> 0`;
    } catch (err) {
      this.core.log.write("error", "dispatch_error", "Recording call starts failed", { calls: calls.length, error: String(err) });
    }
  }
}
