// One Durable Object per campaign (addressed by idFromName(String(campaignId))): the source of truth for the
// campaign's state, settings, contacts, attempts, timers and logs. Its RPC methods are the only way in.
//
// Correctness rules (architecture.md): an attempt is stored as `dialing` before the carrier is asked, and one found
// `dialing` after a restart is reconciled, never blindly re-dialed; call statuses are idempotent and a final one is
// never overwritten; one alarm serves a table of timers; the D1 summary row follows at transitions and every few
// seconds while running.
import { DurableObject } from "cloudflare:workers";
import { clock } from "../lib/clock";
import { DoSql, migrate, migrateOnStart, sql } from "../lib/do-sql";
import type { CallStartResult, CampaignCallRequest, CampaignCallStatus, CampaignMeta, CampaignState, ContactInput, LeaseResult } from "./object-api";
import { CircuitBreaker, DEFAULT_SETTINGS, MaxConcurrency, RateLimit, RetryConfig, ScheduleConfig, type CampaignSettings, mergeSettings } from "./settings";
import { breakerTrips, breakerWindowStart } from "./engine/breaker";
import { readCounts } from "./engine/counts";
import { startCampaignCallVia } from "./engine/call-starter";
import { leaseClient } from "./engine/leases";
import { EngineError, engineConflict } from "./engine/errors";
import { FAULT_RETURNING_METHODS, returnFaults } from "./engine/faults";
import { PROGRESS_ORDER, isBreakerFailure, isFinalStatus } from "./engine/outcomes";
import { packContacts, type PackedContacts } from "./engine/packed";
import { PACE_WINDOW_MS, PaceWindow } from "./engine/pacing";
import { retryDueAt } from "./engine/retry";
import { Schedule } from "./engine/schedule";
import { MIGRATIONS } from "./engine/schema";
import { isFinished, nextState, refusal, type Trigger } from "./engine/transitions";
import type { CampaignCounts, CampaignProgress, CampaignSnapshot, LogEntry, LogLevel, LogPage, SettingsPatch } from "./engine/types";

/** A call with no final status this long after it was dialed is given up on (`unknown`). */
export const MAX_CALL_SECONDS = 3600;
export const TIMEOUT_GRACE_SECONDS = 120;
/** How often (at most) the D1 summary row is refreshed while counts change. */
export const SUMMARY_INTERVAL_MS = 5000;
/** When the organization refuses a lease and no wake-up comes, ask again after this long. */
const ORG_RETRY_FALLBACK_MS = 5000;
/** Dials started per dispatch round at most (each round awaits its leases and starts together). */
const MAX_ROUND = 25;
/**
 * Wall time one alarm invocation spends dialing at most (real time, not the clock: it bounds the invocation, well
 * inside the runtime's limits). Dispatch only runs this long when calls end as fast as they start.
 */
const MAX_DISPATCH_MS = 20_000;
/** Never-attempted contacts sort after due retries (whose key is their due time). */
const PENDING_KEY = 9e15;
const TIMER_MAX_FAILS = 5;

type CampaignRow = {
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

type ContactRow = {
  id: number;
  row: number;
  phone_number: string;
  initial_context: string;
  greeting_override: string | null;
  status: "queued" | "waiting" | "active" | "done" | "skipped";
  attempts: number;
  queue_key: number;
  outcome: string | null;
};

type AttemptRow = {
  id: number;
  contact_id: number;
  attempt: number;
  status: string;
  last_status: string | null;
  run_id: number | null;
  provider_call_id: string | null;
  lease_id: string | null;
  dialed_at: number;
  ended_at: number | null;
  failure: number;
  error: string | null;
};

type TimerKind = "window" | "retry" | "timeout" | "dispatch" | "summary";
type TimerRow = { kind: TimerKind; ref: number; due: number; fails: number };

const OPEN_ATTEMPT = sql`status IN ('dialing', 'in_flight')`;
const iso = (ms: number) => new Date(ms).toISOString();

/** The organization lease of one attempt; the calls module sees it in CampaignCallRequest.leaseId. */
export const leaseIdFor = (campaignId: number, contactId: number, attempt: number) => `campaign:${campaignId}:${contactId}:${attempt}`;

function completeSettings(s: Partial<CampaignSettings> | undefined): CampaignSettings {
  return {
    retry_config: { ...DEFAULT_SETTINGS.retry_config, ...(s?.retry_config ?? {}) },
    max_concurrency: s?.max_concurrency ?? DEFAULT_SETTINGS.max_concurrency,
    rate_limit: s?.rate_limit ?? DEFAULT_SETTINGS.rate_limit,
    schedule_config: s?.schedule_config ?? null,
    circuit_breaker: { ...DEFAULT_SETTINGS.circuit_breaker, ...(s?.circuit_breaker ?? {}) },
  };
}

export class CampaignObject extends DurableObject<Env> {
  private readonly db: DoSql;
  private readonly pace = new PaceWindow();
  private dispatching = false;
  private armedAt: number | null = null;
  private forceSummary = false;
  private settingsCache: { json: string; value: CampaignSettings } | null = null;
  private scheduleCache: { json: string; schedule: Schedule } | null = null;
  private windowCache: { from: number; until: number; open: boolean; change: number | null } | null = null;
  private windowTimerAt: number | null | undefined = undefined;
  private summaryTimerAt: number | null = null;
  /** Settles when the constructor's migration and reconciliation are done (in-process simulations await it). */
  readonly ready: Promise<void>;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = new DoSql(ctx.storage);
    this.ready = migrateOnStart(ctx, this.db, MIGRATIONS, async () => {
      this.loadPace();
      try {
        await this.reconcile();
      } catch (err) {
        console.error(JSON.stringify({ level: "error", event: "campaign_reconcile_failed", error: String(err) }));
      }
    });
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Creation (records engineer, issue 5): initialize, importContacts (chunks), finishImport, discard.

  /** Creates the campaign in `draft`. Repeating it for the same campaign is harmless. */
  async initialize(meta: CampaignMeta): Promise<CampaignSnapshot> {
    const existing = this.campaign();
    if (existing) {
      if (existing.campaign_id !== meta.campaignId) throw engineConflict("This campaign object already belongs to another campaign");
      return this.snapshot();
    }
    const settings = completeSettings(meta.settings);
    this.db.tx(() => {
      this.db.run`INSERT INTO campaign (id, campaign_id, org_id, name, workflow_id, telephony_configuration_id, source_id, parent_campaign_id,
           state, settings, created_at) VALUES (1, ${meta.campaignId}, ${meta.orgId}, ${meta.name}, ${meta.workflowId}, ${meta.telephonyConfigurationId}, ${meta.sourceId}, ${meta.parentCampaignId ?? null}, 'draft', ${JSON.stringify(settings)}, ${iso(clock.now())})`;
      this.log("info", "campaign_created", `Campaign '${meta.name}' created`, meta.parentCampaignId ? { parent_campaign_id: meta.parentCampaignId } : {});
    });
    return this.snapshot();
  }

  /** Adds one chunk of validated contacts; a phone number already in the campaign is reported, not inserted. */
  async importContacts(chunk: ContactInput[]): Promise<{ inserted: number; duplicates: { row: number; phone_number: string; first_row: number }[] }> {
    return this.importPacked(packContacts(chunk));
  }

  /** `importContacts` for a chunk the caller packed (packContacts): what the CSV import sends. */
  async importPacked(parts: PackedContacts): Promise<{ inserted: number; duplicates: { row: number; phone_number: string; first_row: number }[] }> {
    const c = this.need();
    if (c.import_done || c.state !== "draft") throw engineConflict("Contacts can only be added while the campaign is being created");
    const duplicates: { row: number; phone_number: string; first_row: number }[] = [];
    let inserted = 0;
    this.db.tx(() => {
      // Many contacts per statement: a statement per row cost ~20 µs a row (mostly the per-statement cost of the
      // counters trigger); this is ~6. Bound parameters are capped at 100, so multi-row VALUES would fit only 25
      // rows; one JSON parameter has no such cap. Rows go in order, so ON CONFLICT keeps a number's first row.
      for (const { rows, json } of parts) {
        const n = this.db.changes`INSERT INTO contacts (row, phone_number, initial_context, greeting_override, queue_key)
           SELECT value->>0, value->>1, value->>2, value->>3, ${PENDING_KEY} FROM json_each(${json}) WHERE true ON CONFLICT (phone_number) DO NOTHING`;
        inserted += n;
        if (n === rows) continue;
        // Rows not inserted are those whose number is stored under another row (a file's rows are distinct).
        const found = this.db.all<{ row: number; phone_number: string; first_row: number }>`SELECT j.value->>0 AS row, j.value->>1 AS phone_number, c.row AS first_row
           FROM json_each(${json}) j JOIN contacts c ON c.phone_number = j.value->>1
           WHERE c.row <> j.value->>0 ORDER BY j.key`;
        // Fails (and rolls the chunk back) rather than under-report, should a caller ever repeat a row number.
        if (n + found.length !== rows) throw new Error("importContacts: a chunk repeats a row number");
        for (const d of found) duplicates.push({ row: d.row, phone_number: d.phone_number, first_row: d.first_row });
      }
    });
    return { inserted, duplicates };
  }

  /** Marks the contact list complete; the campaign can start from now on. */
  async finishImport(): Promise<{ total: number }> {
    const c = this.need();
    const total = this.db.value<number>`SELECT count(*) FROM contacts` ?? 0;
    if (!c.import_done) {
      this.db.tx(() => {
        this.db.run`UPDATE campaign SET import_done = 1, source_synced_at = ${iso(clock.now())}, summary_dirty = 1`;
        this.log("info", "source_sync_completed", `${total} contact${total === 1 ? "" : "s"} imported`, { total });
      });
    }
    return { total };
  }

  /** The source could not be read: draft or running → failed. */
  async failSource(message: string): Promise<CampaignSnapshot> {
    const c = this.need();
    const to = this.checkTransition(c, "source_failed");
    this.db.tx(() => {
      this.db.run`UPDATE campaign SET state = ${to}, source_error = ${message}, summary_dirty = 1`;
      this.log("error", "source_sync_failed", `The contact source could not be read: ${message}`, { error: message });
      this.log("error", "campaign_failed", "Campaign failed", { reason: "source_sync_failed" });
      this.skipRemaining();
    });
    this.forceSummary = true;
    await this.settle();
    return this.snapshot();
  }

  /** Wipes everything (used when create fails midway). The object is blank afterwards. */
  async discard(): Promise<{ discarded: true }> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.armedAt = null;
    this.settingsCache = this.scheduleCache = this.windowCache = null;
    this.windowTimerAt = undefined;
    this.summaryTimerAt = null;
    this.pace.load([]);
    migrate(this.db, MIGRATIONS);
    return { discarded: true };
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Reading.

  async snapshot(): Promise<CampaignSnapshot> {
    const c = this.need();
    return {
      id: c.campaign_id,
      org_id: c.org_id,
      name: c.name,
      workflow_id: c.workflow_id,
      telephony_configuration_id: c.telephony_configuration_id,
      state: c.state,
      source_type: "csv",
      source_id: c.source_id,
      settings: this.settings(c),
      created_at: c.created_at,
      started_at: c.started_at,
      completed_at: c.completed_at,
      parent_campaign_id: c.parent_campaign_id,
      redialed_campaign_id: c.redialed_campaign_id,
      counts: this.counts(),
      next_window_at: this.nextWindowAt(c),
      logs: this.newestLogs(100),
    };
  }

  async progress(): Promise<CampaignProgress> {
    const c = this.need();
    const k = this.counts();
    // Contract 6: exactly processed / total × 100 (0 when total is 0), not rounded: clients round for display.
    const pct = k.total ? (k.processed / k.total) * 100 : 0;
    return {
      campaign_id: c.campaign_id,
      state: c.state,
      total_rows: k.total,
      processed_rows: k.processed,
      failed_calls: k.failed_calls,
      progress_percentage: pct,
      source_sync: {
        status: c.source_error ? "failed" : c.import_done ? "completed" : "pending",
        last_synced_at: c.source_synced_at,
        error: c.source_error,
      },
      rate_limit: this.settings(c).rate_limit,
      started_at: c.started_at,
      completed_at: c.completed_at,
      total: k.total,
      processed: k.processed,
      completed: k.completed,
      failed: k.failed,
      pending: k.pending,
      in_progress: k.in_progress,
      completion_percentage: pct,
      next_window_at: this.nextWindowAt(c),
    };
  }

  /** Logs newest first, `limit` per page, continuing below log id `before`. */
  async logs(limit = 50, before: number | null = null): Promise<LogPage> {
    this.need();
    const rows = this.db.all<{ id: number; ts: string; level: string; event: string; message: string; details: string }>`
      SELECT * FROM logs WHERE (${before} IS NULL OR id < ${before}) ORDER BY id DESC LIMIT ${limit + 1}`;
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return { items: page.map((r) => ({ id: r.id, ...this.toLog(r) })), next_before: more ? page[page.length - 1].id : null };
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Operations.

  async start(): Promise<CampaignSnapshot> {
    const c = this.need();
    if (c.state === "paused") return this.resume();
    this.checkTransition(c, "start");
    if (!c.import_done) throw engineConflict("Cannot start a campaign whose contacts are still being imported");
    const now = clock.now();
    this.db.tx(() => {
      this.db.run`UPDATE campaign SET state = 'running', started_at = coalesce(started_at, ${iso(now)}), breaker_since = ${now}, window_open = NULL, blocked = NULL, summary_dirty = 1`;
      this.log("info", "campaign_started", "Campaign started", {});
      this.onRunning(now);
    });
    this.forceSummary = true;
    await this.settle();
    return this.snapshot();
  }

  async resume(): Promise<CampaignSnapshot> {
    const c = this.need();
    this.checkTransition(c, "resume");
    const now = clock.now();
    this.db.tx(() => {
      // The breaker's window starts afresh: what tripped it is behind us. It opens one millisecond after `now`, since
      // every attempt already finished ended at or before `now`, so the failures that tripped it stay out of it even
      // when no time passes between the trip and the resume (the window counts `ended_at >= breaker_since`).
      this.db.run`UPDATE campaign SET state = 'running', breaker_since = ${now + 1}, window_open = NULL, blocked = NULL, summary_dirty = 1`;
      this.log("info", "campaign_resumed", "Campaign resumed", {});
      this.onRunning(now);
    });
    this.forceSummary = true;
    await this.settle();
    return this.snapshot();
  }

  async pause(): Promise<CampaignSnapshot> {
    const c = this.need();
    const to = this.checkTransition(c, "pause");
    this.db.tx(() => {
      this.db.run`UPDATE campaign SET state = ${to}, summary_dirty = 1`;
      const inFlight = this.openAttempts();
      this.log("info", "campaign_paused", "Campaign paused; calls in progress finish", { in_progress: inFlight });
      this.clearRunningTimers();
    });
    this.forceSummary = true;
    await this.settle();
    return this.snapshot();
  }

  async cancel(): Promise<CampaignSnapshot> {
    const c = this.need();
    const to = this.checkTransition(c, "cancel");
    this.db.tx(() => {
      this.db.run`UPDATE campaign SET state = ${to}, summary_dirty = 1`;
      const skipped = this.skipRemaining();
      this.log("info", "campaign_cancelled", "Campaign cancelled; pending contacts skipped, calls in progress finish", {
        skipped,
        in_progress: this.openAttempts(),
      });
      this.clearRunningTimers();
    });
    this.forceSummary = true;
    await this.settle();
    return this.snapshot();
  }

  /** PATCH: merges the change over the current settings; it takes effect at once. 409 once finished. */
  async updateSettings(patch: SettingsPatch): Promise<CampaignSnapshot> {
    const c = this.need();
    this.checkTransition(c, "update");
    const cur = this.settings(c);
    const merged = mergeSettings(cur, patch);
    const checked = validateSettings(merged);
    const name = patch.name !== undefined ? patch.name : c.name;
    if (typeof name !== "string" || name.length < 1 || name.length > 255) throw new EngineError(422, "name must be 1 to 255 characters");
    const changed = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
    const now = clock.now();
    this.db.tx(() => {
      this.db.run`UPDATE campaign SET settings = ${JSON.stringify(checked)}, name = ${name}, summary_dirty = 1`;
      this.windowCache = null;
      this.log("info", "settings_updated", `Settings updated: ${changed.join(", ") || "nothing"}`, { fields: changed });
      if (c.state === "running") {
        this.refreshWindow(now);
        this.checkBreaker(now);
        this.pokeDispatch(now);
      }
    });
    this.forceSummary = true;
    await this.settle();
    return this.snapshot();
  }

  /** A nudge (from the organization object when a slot frees): try dialing again now. */
  async wake(): Promise<void> {
    const c = this.campaign();
    if (c?.state !== "running") return;
    this.pokeDispatch(clock.now());
    await this.rearm();
  }

  /** A call status from the calls module. Duplicates, reorderings and unknown attempts change nothing. */
  async onCallStatus(s: CampaignCallStatus): Promise<{ applied: boolean }> {
    const c = this.campaign();
    if (!c) return { applied: false };
    const a = this.db.one<AttemptRow>`SELECT * FROM attempts WHERE contact_id = ${s.contactId} AND attempt = ${s.attempt}`;
    if (!a || (a.run_id != null && s.runId != null && a.run_id !== s.runId)) {
      this.log("warning", "call_status_ignored", "A call status arrived for an attempt this campaign does not know; ignored", {
        run_id: s.runId,
        contact_id: s.contactId,
        attempt: s.attempt,
        status: s.status,
      });
      return { applied: false };
    }
    if (!(a.status === "dialing" || a.status === "in_flight")) return { applied: false }; // already final
    if (!isFinalStatus(s.status)) {
      const rank = PROGRESS_ORDER[s.status];
      if (rank === undefined) return { applied: false };
      const prev = a.last_status ? (PROGRESS_ORDER[a.last_status] ?? -1) : -1;
      if (rank <= prev && a.run_id != null) return { applied: false };
      this.db.run`UPDATE attempts SET last_status = CASE WHEN ${rank} > coalesce(${a.last_status ? (PROGRESS_ORDER[a.last_status] ?? -1) : -1}, -1) THEN ${s.status} ELSE last_status END, run_id = coalesce(run_id, ${s.runId ?? null}) WHERE id = ${a.id}`;
      return { applied: true };
    }
    if (a.run_id == null && s.runId != null) this.db.run`UPDATE attempts SET run_id = ${s.runId} WHERE id = ${a.id}`;
    const at = Date.parse(s.at);
    const applied = await this.finishAttempt(a, s.status, Number.isFinite(at) ? Math.min(at, clock.now()) : clock.now(), {});
    await this.settle();
    return { applied };
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Redial (the child is created by engine/redial.ts through these).

  /** What a redial child needs from its parent; 409 unless the parent is completed or cancelled. */
  async redialPlan(outcomes: string[]): Promise<{ meta: Omit<CampaignMeta, "campaignId">; count: number }> {
    const c = this.need();
    this.checkTransition(c, "redial");
    // One JSON parameter however many outcomes are asked for (SQLite here binds at most 100).
    const count = outcomes.length
      ? (this.db.value<number>`SELECT count(*) FROM contacts WHERE status IN ('done', 'skipped') AND outcome IN (SELECT value FROM json_each(${JSON.stringify(outcomes)}))` ?? 0)
      : 0;
    return {
      meta: {
        orgId: c.org_id,
        name: c.name,
        workflowId: c.workflow_id,
        telephonyConfigurationId: c.telephony_configuration_id,
        sourceId: c.source_id,
        settings: this.settings(c),
        parentCampaignId: c.campaign_id,
      },
      count,
    };
  }

  /** One page of the contacts whose final outcome is in `outcomes`, in contact order after `afterId`. */
  async redialContacts(outcomes: string[], afterId: number, limit: number): Promise<{ contacts: ContactInput[]; next: number | null }> {
    this.need();
    if (!outcomes.length) return { contacts: [], next: null };
    const rows = this.db.all<ContactRow>`SELECT * FROM contacts WHERE id > ${afterId} AND status IN ('done', 'skipped') AND outcome IN (SELECT value FROM json_each(${JSON.stringify(outcomes)})) ORDER BY id LIMIT ${limit}`;
    return {
      contacts: rows.map((r) => ({
        row: r.row,
        phone_number: r.phone_number,
        initial_context: JSON.parse(r.initial_context),
        greeting_override: r.greeting_override ? JSON.parse(r.greeting_override) : null,
      })),
      next: rows.length === limit ? rows[rows.length - 1].id : null,
    };
  }

  /** Records the newest redial child. */
  async linkRedial(childId: number, count: number): Promise<void> {
    this.need();
    this.db.tx(() => {
      this.db.run`UPDATE campaign SET redialed_campaign_id = ${childId}, summary_dirty = 1`;
      this.log("info", "campaign_redialed", `Redial campaign ${childId} created with ${count} contact${count === 1 ? "" : "s"}`, {
        redialed_campaign_id: childId,
        contacts: count,
      });
    });
    this.forceSummary = true;
    await this.settle();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The alarm: due timers first (each isolated), then dispatch, then the summary, then re-arm.

  async alarm(): Promise<void> {
    this.armedAt = null;
    const c = this.campaign();
    if (!c) return;
    const now = clock.now();
    const due = this.db.all<TimerRow>`SELECT * FROM timers WHERE due <= ${now} ORDER BY due LIMIT 1000`;
    for (const t of due) {
      try {
        await this.fireTimer(t, now);
      } catch (err) {
        this.timerFailed(t, err, now);
      }
    }
    try {
      await this.dispatch();
    } catch (err) {
      this.log("error", "dispatch_error", "Dispatching calls failed; retrying shortly", { error: String(err) });
      this.setTimer("dispatch", 0, clock.now() + ORG_RETRY_FALLBACK_MS, "min");
    }
    await this.settle();
  }

  private async fireTimer(t: TimerRow, now: number): Promise<void> {
    // Taken off first: an alarm delivered twice finds nothing left to do.
    if (!this.db.run`DELETE FROM timers WHERE kind = ${t.kind} AND ref = ${t.ref} AND due = ${t.due}`) return;
    switch (t.kind) {
      case "summary":
        this.summaryTimerAt = null;
        return; // the summary is written after the timers anyway
      case "dispatch":
        return; // dispatch runs after the timers anyway
      case "window":
        this.windowTimerAt = undefined;
        this.refreshWindow(now);
        return;
      case "retry": {
        // The delay is over; the contact queues again (ahead of never-attempted ones) and waits for a window.
        const n = this.db.run`UPDATE contacts SET status = 'queued', queue_key = ${t.due} WHERE id = ${t.ref} AND status = 'waiting'`;
        if (n) this.markDirty();
        return;
      }
      case "timeout": {
        const a = this.db.one<AttemptRow>`SELECT * FROM attempts WHERE id = ${t.ref}`;
        if (!a || !(a.status === "dialing" || a.status === "in_flight")) return;
        const done = await this.finishAttempt(a, "unknown", now, { noRetry: true, error: "No final status before the call timeout" });
        if (done) {
          const ct = this.db.one<ContactRow>`SELECT phone_number FROM contacts WHERE id = ${a.contact_id}`;
          this.log("warning", "call_timed_out", `No final status for ${ct?.phone_number ?? "a contact"} within ${MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS}s; outcome unknown, not retried`, {
            contact_id: a.contact_id,
            attempt: a.attempt,
            run_id: a.run_id,
          });
        }
        return;
      }
      default:
        this.log("warning", "timer_unknown", `Dropped a timer of unknown kind '${t.kind}'`, { kind: t.kind, ref: t.ref });
    }
  }

  /** A timer that throws is retried with backoff, then dropped; it never blocks the rest of the alarm. */
  private timerFailed(t: TimerRow, err: unknown, now: number): void {
    const fails = t.fails + 1;
    const dropped = fails >= TIMER_MAX_FAILS;
    try {
      this.log("error", "timer_failed", `Timer ${t.kind}:${t.ref} failed${dropped ? " and was dropped" : "; retrying"}`, { kind: t.kind, ref: t.ref, fails, error: String(err) });
      if (dropped) this.db.run`DELETE FROM timers WHERE kind = ${t.kind} AND ref = ${t.ref}`;
      else
        this.db.run`INSERT INTO timers (kind, ref, due, fails) VALUES (${t.kind}, ${t.ref}, ${now + 60_000 * fails}, ${fails}) ON CONFLICT (kind, ref) DO UPDATE SET due = excluded.due, fails = excluded.fails`;
    } catch (inner) {
      console.error(JSON.stringify({ level: "error", event: "timer_failed", kind: t.kind, ref: t.ref, error: String(err), inner: String(inner) }));
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Dispatch.

  private async dispatch(): Promise<void> {
    if (this.dispatching) return;
    this.dispatching = true;
    try {
      const since = Date.now();
      for (;;) {
        if (!(await this.dispatchRound())) break;
        if (Date.now() - since >= MAX_DISPATCH_MS) {
          // Bounded work per alarm: the next alarm, due at once, carries on.
          if (this.campaign()?.state === "running") this.pokeDispatch(clock.now());
          break;
        }
      }
    } finally {
      this.dispatching = false;
    }
  }

  /** One round: pick what may start now, take leases, record `dialing`, then start the calls. True: go again. */
  private async dispatchRound(): Promise<boolean> {
    let c = this.campaign();
    if (!c || c.state !== "running") return false;
    let now = clock.now();
    let s = this.settings(c);
    if (!this.refreshWindow(now)) return false;
    const room = s.max_concurrency - this.openAttempts();
    if (room <= 0) return false; // a final status or a timeout pokes dispatch again
    const budget = this.pace.budget(s.rate_limit, now);
    if (budget <= 0) {
      this.setTimer("dispatch", 0, this.pace.nextAt(s.rate_limit, now), "min");
      return false;
    }
    const picks = this.db.all<ContactRow>`SELECT id, attempts FROM contacts WHERE status = 'queued' ORDER BY queue_key, id LIMIT ${Math.min(room, budget, MAX_ROUND)}`;
    if (!picks.length) {
      if (this.checkCompletion(now)) this.forceSummary = true;
      return false;
    }

    const org = leaseClient(this.env, c.org_id);
    const ttlSeconds = MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS + 60;
    const leaseIds = picks.map((p) => leaseIdFor(c!.campaign_id, p.id, p.attempts + 1));
    const leases = await org
      .acquireMany(leaseIds.map((leaseId) => ({ leaseId, ttlSeconds, waiter: c!.campaign_id })))
      .catch((err): LeaseResult[] => {
        console.warn(JSON.stringify({ level: "warning", event: "lease_acquire_failed", campaign_id: c!.campaign_id, error: String(err) }));
        return leaseIds.map(() => ({ granted: false, inUse: -1, cap: -1, retryAfterSeconds: ORG_RETRY_FALLBACK_MS / 1000 }));
      });

    // The world may have moved while the leases were requested: check everything again before recording.
    c = this.campaign();
    now = clock.now();
    if (!c) return false;
    s = this.settings(c);
    const go = c.state === "running" && this.windowAt(now).open;
    let room2 = s.max_concurrency - this.openAttempts();
    let budget2 = this.pace.budget(s.rate_limit, now);
    let refused: LeaseResult | null = null;
    const chosen: { contactId: number; leaseId: string }[] = [];
    const unused: string[] = [];
    picks.forEach((p, i) => {
      if (!leases[i].granted) refused = leases[i];
      else if (!go || room2 <= 0 || budget2 <= 0) unused.push(leaseIds[i]);
      else {
        chosen.push({ contactId: p.id, leaseId: leaseIds[i] });
        room2--;
        budget2--;
      }
    });
    const campaign = c;
    const started = this.db.tx(() => {
      const out: { attempt: AttemptRow; contact: ContactRow }[] = [];
      for (const ch of chosen) {
        const rec = this.recordDialing(ch.contactId, ch.leaseId, now);
        if (rec) out.push(rec);
        else unused.push(ch.leaseId);
      }
      if (refused) this.noteBlocked("org_cap", refused);
      else if (out.length) this.noteBlocked(null);
      return out;
    });
    if (refused) this.setTimer("dispatch", 0, now + Math.max(1, (refused as LeaseResult).retryAfterSeconds ?? 5) * 1000, "min");
    for (const id of unused) await this.releaseLease(campaign.org_id, id);
    await Promise.all(started.map((x) => this.startOne(campaign, x.attempt, x.contact)));
    return started.length > 0 && !refused;
  }

  /** The exactly-once step: the attempt exists as `dialing` (with its timeout) before anyone is asked to call. */
  private recordDialing(contactId: number, leaseId: string, now: number): { attempt: AttemptRow; contact: ContactRow } | null {
    const contact = this.db.one<ContactRow>`SELECT * FROM contacts WHERE id = ${contactId} AND status = 'queued'`;
    if (!contact) return null;
    const attemptNo = contact.attempts + 1;
    if (leaseId !== leaseIdFor(this.need().campaign_id, contactId, attemptNo)) return null;
    const attempt = this.db.one<AttemptRow>`INSERT INTO attempts (contact_id, attempt, status, lease_id, dialed_at) VALUES (${contactId}, ${attemptNo}, 'dialing', ${leaseId}, ${now}) RETURNING *`!;
    this.db.run`UPDATE contacts SET status = 'active', attempts = ${attemptNo} WHERE id = ${contactId}`;
    this.setTimer("timeout", attempt.id, now + (MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS) * 1000, "set");
    this.markDirty();
    this.pace.record(now);
    return { attempt, contact };
  }

  private async startOne(c: CampaignRow, a: AttemptRow, ct: ContactRow): Promise<void> {
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
      leaseId: a.lease_id ?? undefined,
    };
    let result: CallStartResult | null = null;
    let thrown: unknown = null;
    try {
      result = await startCampaignCallVia(this.env, req);
    } catch (err) {
      thrown = err;
    }
    await this.applyStart(c, a, ct, result, thrown);
  }

  private async applyStart(c: CampaignRow, a: AttemptRow, ct: ContactRow, r: CallStartResult | null, thrown: unknown): Promise<void> {
    const now = clock.now();
    const where = { contact_id: ct.id, phone_number: ct.phone_number, attempt: a.attempt };
    if (!r) {
      // We cannot know whether the carrier was asked: when in doubt, don't dial again.
      const fresh = this.db.one<AttemptRow>`SELECT * FROM attempts WHERE id = ${a.id}`!;
      if (await this.finishAttempt(fresh, "unknown", now, { noRetry: true, error: String(thrown) }))
        this.log("error", "dial_failed", `Starting the call to ${ct.phone_number} failed unexpectedly; it may have been placed, so it is not retried`, { ...where, error: String(thrown) });
      return;
    }
    if (r.ok) {
      this.db.run`UPDATE attempts SET status = CASE WHEN status = 'dialing' THEN 'in_flight' ELSE status END, run_id = coalesce(run_id, ${r.runId}), provider_call_id = coalesce(provider_call_id, ${r.providerCallId}) WHERE id = ${a.id}`;
      return;
    }
    if (r.kind === "capacity" || r.kind === "config") {
      // Nothing reached a carrier: the attempt is taken back and the contact queues again.
      const undone = this.db.tx(() => {
        const n = this.db.run`DELETE FROM attempts WHERE id = ${a.id} AND status = 'dialing'`;
        if (!n) return false;
        this.db.run`UPDATE contacts SET status = 'queued', attempts = attempts - 1 WHERE id = ${ct.id} AND status = 'active'`;
        this.db.run`DELETE FROM timers WHERE kind = 'timeout' AND ref = ${a.id}`;
        this.markDirty();
        if (r.kind === "capacity") {
          this.noteBlocked("org_cap", { granted: false, inUse: -1, cap: -1 });
          this.setTimer("dispatch", 0, now + ORG_RETRY_FALLBACK_MS, "min");
        } else {
          this.log("error", "dial_failed", `Cannot start calls: ${r.message}`, { ...where, kind: r.kind, error: r.message });
          const cur = this.need();
          if (cur.state === "running") {
            this.db.run`UPDATE campaign SET state = 'paused', summary_dirty = 1`;
            this.log("warning", "campaign_paused", "Campaign paused until the configuration is fixed; resume to continue", { reason: "configuration", error: r.message });
            this.clearRunningTimers();
            this.forceSummary = true;
          }
        }
        return true;
      });
      if (undone && a.lease_id) await this.releaseLease(c.org_id, a.lease_id);
      return;
    }
    // The carrier refused or the number is invalid: a final `failed`, never retried, and a breaker failure.
    if (r.runId != null) this.db.run`UPDATE attempts SET run_id = coalesce(run_id, ${r.runId}) WHERE id = ${a.id}`;
    const fresh = this.db.one<AttemptRow>`SELECT * FROM attempts WHERE id = ${a.id}`!;
    await this.finishAttempt(fresh, "failed", now, { error: r.message });
    // Logged even when the run's own `failed` status already finished the attempt (it reaches the campaign
    // before this reply does): the log is where an operator reads why the carrier refused.
    this.log("warning", "dial_failed", `The call to ${ct.phone_number} was not placed: ${r.message}`, { ...where, kind: r.kind, run_id: r.runId, error: r.message });
  }

  /**
   * Ends an open attempt with a final outcome: frees the slot (and lease), schedules a retry when the policy says so,
   * feeds the breaker and completes the campaign when nothing is left. False when the attempt was already final.
   */
  private async finishAttempt(a: AttemptRow, outcome: string, atMs: number, opts: { noRetry?: boolean; error?: string }): Promise<boolean> {
    const now = clock.now();
    const c = this.need();
    const s = this.settings(c);
    const applied = this.db.tx(() => {
      const n = this.db.run`UPDATE attempts SET status = ${outcome}, ended_at = ${now}, failure = ${isBreakerFailure(outcome) ? 1 : 0}, error = coalesce(${opts.error ?? null}, error) WHERE id = ${a.id} AND ${OPEN_ATTEMPT}`;
      if (!n) return false;
      this.db.run`DELETE FROM timers WHERE kind = 'timeout' AND ref = ${a.id}`;
      const live = c.state === "running" || c.state === "paused" || c.state === "draft";
      const due = live && !opts.noRetry ? retryDueAt(outcome, a.attempt, s.retry_config, atMs) : null;
      if (due != null) {
        this.db.run`UPDATE contacts SET status = 'waiting', outcome = ${outcome} WHERE id = ${a.contact_id} AND status = 'active'`;
        this.setTimer("retry", a.contact_id, due, "set");
      } else {
        this.db.run`UPDATE contacts SET status = 'done', outcome = ${outcome} WHERE id = ${a.contact_id} AND status = 'active'`;
      }
      this.markDirty();
      if (c.state === "running") {
        if (this.checkBreaker(now) || this.checkCompletion(now)) this.forceSummary = true;
        else this.pokeDispatch(now);
      }
      return true;
    });
    if (applied && a.lease_id) await this.releaseLease(c.org_id, a.lease_id);
    return applied;
  }

  private async releaseLease(orgId: number, leaseId: string): Promise<void> {
    try {
      await leaseClient(this.env, orgId).release(leaseId);
    } catch (err) {
      // The lease expires by itself; a failed release costs capacity for a while, never correctness.
      console.warn(JSON.stringify({ level: "warning", event: "lease_release_failed", lease_id: leaseId, error: String(err) }));
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Restart recovery.

  /**
   * Attempts left `dialing` by a previous instance: the carrier may or may not have been asked. The run record decides
   * when it can; otherwise the outcome is `unknown` and the contact is not dialed again.
   */
  private async reconcile(): Promise<void> {
    const c = this.campaign();
    if (!c) return;
    const stuck = this.db.all<AttemptRow>`SELECT * FROM attempts WHERE status = 'dialing'`;
    for (const a of stuck) {
      let run: { id: number; status: string; provider_call_id: string | null } | null = null;
      try {
        run = await this.env.DB.prepare(
          `SELECT id, status, provider_call_id FROM workflow_runs WHERE campaign_id = ? AND contact_id = ? AND attempt = ? ORDER BY id DESC LIMIT 1`,
        )
          .bind(c.campaign_id, a.contact_id, a.attempt)
          .first();
      } catch {
        run = null;
      }
      const now = clock.now();
      if (run && isFinalStatus(run.status)) {
        this.db.run`UPDATE attempts SET run_id = coalesce(run_id, ${run.id}) WHERE id = ${a.id}`;
        await this.finishAttempt({ ...a, run_id: run.id }, run.status, now, {});
        this.log("warning", "attempt_reconciled", `An interrupted call start was found finished (${run.status}) in its run record`, { contact_id: a.contact_id, attempt: a.attempt, run_id: run.id, outcome: run.status });
      } else if (run && (run.provider_call_id || run.status !== "queued")) {
        // The carrier has the call: keep waiting for its statuses (the timeout still applies).
        this.db.run`UPDATE attempts SET status = 'in_flight', run_id = ${run.id}, provider_call_id = ${run.provider_call_id} WHERE id = ${a.id} AND status = 'dialing'`;
        this.log("info", "attempt_reconciled", "An interrupted call start was found placed; waiting for its outcome", { contact_id: a.contact_id, attempt: a.attempt, run_id: run.id });
      } else {
        await this.finishAttempt(a, "unknown", now, { noRetry: true, error: "Interrupted while starting the call" });
        this.log("warning", "attempt_reconciled", "A call start was interrupted; it may have been placed, so the contact is not dialed again (outcome unknown)", {
          contact_id: a.contact_id,
          attempt: a.attempt,
          run_id: run?.id ?? null,
        });
      }
    }
    if (stuck.length) {
      const cur = this.campaign();
      if (cur?.state === "running") this.pokeDispatch(clock.now());
      await this.settle();
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // State helpers (synchronous; callers wrap them in transactions).

  private campaign(): CampaignRow | null {
    return this.db.one<CampaignRow>`SELECT * FROM campaign WHERE id = 1`;
  }

  private need(): CampaignRow {
    const c = this.campaign();
    if (!c) throw new EngineError(404, "Campaign not found");
    return c;
  }

  private settings(c: CampaignRow): CampaignSettings {
    if (this.settingsCache?.json !== c.settings) this.settingsCache = { json: c.settings, value: completeSettings(JSON.parse(c.settings)) };
    return this.settingsCache.value;
  }

  private schedule(c: CampaignRow): Schedule {
    if (this.scheduleCache?.json !== c.settings) this.scheduleCache = { json: c.settings, schedule: new Schedule(this.settings(c).schedule_config) };
    return this.scheduleCache.schedule;
  }

  private checkTransition(c: CampaignRow, trigger: Trigger): CampaignState {
    const to = nextState(c.state, trigger);
    if (!to) throw engineConflict(refusal(c.state, trigger));
    return to;
  }

  private log(level: LogLevel, event: string, message: string, details: Record<string, unknown>): void {
    this.db.run`INSERT INTO logs (ts, level, event, message, details) VALUES (${iso(clock.now())}, ${level}, ${event}, ${message}, ${JSON.stringify(details)})`;
  }

  private toLog(r: { ts: string; level: string; event: string; message: string; details: string }): LogEntry {
    return { ts: r.ts, level: r.level as LogLevel, event: r.event, message: r.message, details: JSON.parse(r.details) };
  }

  private newestLogs(n: number): LogEntry[] {
    return this.db
      .all<{ ts: string; level: string; event: string; message: string; details: string }>`SELECT ts, level, event, message, details FROM logs ORDER BY id DESC LIMIT ${n}`
      .map((r) => this.toLog(r));
  }

  private markDirty(): void {
    this.db.run`UPDATE campaign SET summary_dirty = 1 WHERE summary_dirty = 0`;
  }

  private openAttempts(): number {
    return this.db.value<number>`SELECT count(*) FROM attempts WHERE ${OPEN_ATTEMPT}` ?? 0;
  }

  /** Contact and attempt counts (kept by triggers: one row read). */
  counts(): CampaignCounts {
    return readCounts(this.db);
  }

  /** Entering `running`: the window is looked at afresh, dispatch runs soon, an empty campaign completes. */
  private onRunning(now: number): void {
    this.windowCache = null;
    this.windowTimerAt = undefined;
    this.refreshWindow(now);
    if (!this.checkBreaker(now)) this.checkCompletion(now);
    this.pokeDispatch(now);
  }

  /** Pending and waiting contacts are skipped (cancel, failure); open attempts run on and are recorded. */
  private skipRemaining(): number {
    const n = this.db.changes`UPDATE contacts SET status = 'skipped' WHERE status IN ('queued', 'waiting')`;
    this.db.run`DELETE FROM timers WHERE kind = 'retry'`;
    return n;
  }

  private clearRunningTimers(): void {
    this.db.run`DELETE FROM timers WHERE kind IN ('window', 'dispatch')`;
    this.windowTimerAt = undefined;
  }

  private setTimer(kind: TimerKind, ref: number, due: number, mode: "set" | "min"): void {
    const conflict = mode === "min" ? sql`due = min(due, excluded.due), fails = 0` : sql`due = excluded.due, fails = 0`;
    this.db.run`INSERT INTO timers (kind, ref, due) VALUES (${kind}, ${ref}, ${due}) ON CONFLICT (kind, ref) DO UPDATE SET ${conflict}`;
  }

  private pokeDispatch(now: number): void {
    this.setTimer("dispatch", 0, now, "min");
  }

  /** Whether calls may start at `now`, and when that changes (cached until then). */
  private windowAt(now: number): { open: boolean; change: number | null } {
    const w = this.windowCache;
    if (w && w.from <= now && now < w.until) return w;
    const sched = this.schedule(this.need());
    const open = sched.isOpen(now);
    const change = sched.always ? null : sched.nextChange(now);
    this.windowCache = { from: now, until: change ?? Number.MAX_SAFE_INTEGER, open, change };
    return this.windowCache;
  }

  /** Logs window openings and closings, keeps the window timer at the next change; returns whether it is open. */
  private refreshWindow(now: number): boolean {
    const c = this.need();
    if (c.state !== "running") return false;
    const { open, change } = this.windowAt(now);
    const was = c.window_open;
    if (was === null ? !open : (was === 1) !== open) {
      if (open) this.log("info", "window_opened", "Calling window opened", {});
      else {
        const next = this.schedule(c).nextOpening(now);
        this.log("info", "window_closed", next ? `Outside the calling schedule; no call starts until ${iso(next)}` : "Outside the calling schedule", { next_window_at: next ? iso(next) : null });
      }
    }
    if (was !== (open ? 1 : 0)) this.db.run`UPDATE campaign SET window_open = ${open ? 1 : 0}`;
    if (this.windowTimerAt !== change) {
      if (change == null) this.db.run`DELETE FROM timers WHERE kind = 'window'`;
      else this.setTimer("window", 0, change, "set");
      this.windowTimerAt = change;
    }
    return open;
  }

  private nextWindowAt(c: CampaignRow): string | null {
    if (isFinished(c.state)) return null;
    const sched = this.schedule(c);
    if (sched.always) return null;
    const now = clock.now();
    if (sched.isOpen(now)) return null;
    const next = sched.nextOpening(now);
    return next ? iso(next) : null;
  }

  /** Trips the breaker (running → paused) when the window's failure share reaches the threshold. */
  private checkBreaker(now: number): boolean {
    const c = this.need();
    const cfg = this.settings(c).circuit_breaker;
    if (c.state !== "running" || !cfg.enabled) return false;
    const from = breakerWindowStart(now, cfg, c.breaker_since);
    const w = this.db.one<{ n: number; f: number }>`SELECT count(*) AS n, coalesce(sum(failure), 0) AS f FROM attempts WHERE ended_at >= ${from}`!;
    if (!breakerTrips(cfg, w.n, w.f)) return false;
    this.db.run`UPDATE campaign SET state = 'paused', summary_dirty = 1`;
    this.log("warning", "circuit_breaker_tripped", `Circuit breaker tripped: ${w.f} of the last ${w.n} calls failed within ${cfg.window_seconds}s (threshold ${Math.round(cfg.failure_threshold * 100)}%); campaign paused`, {
      failures: w.f,
      finished: w.n,
      failure_threshold: cfg.failure_threshold,
      window_seconds: cfg.window_seconds,
    });
    this.log("info", "campaign_paused", "Campaign paused by the circuit breaker; calls in progress finish", { reason: "circuit_breaker" });
    this.clearRunningTimers();
    return true;
  }

  /** running → completed the moment nothing is pending, in flight or awaiting retry. */
  private checkCompletion(now: number): boolean {
    const c = this.need();
    if (c.state !== "running" || !c.import_done) return false;
    if (this.db.one`SELECT 1 AS x FROM contacts WHERE status IN ('queued', 'waiting', 'active') LIMIT 1`) return false;
    if (this.db.one`SELECT 1 AS x FROM attempts WHERE ${OPEN_ATTEMPT} LIMIT 1`) return false;
    this.db.run`UPDATE campaign SET state = 'completed', completed_at = ${iso(now)}, summary_dirty = 1`;
    const k = this.counts();
    this.log("info", "campaign_completed", `Campaign completed: ${k.completed} of ${k.total} contacts reached`, { total: k.total, completed: k.completed, failed: k.failed, executed_count: k.executed });
    this.clearRunningTimers();
    this.forceSummary = true;
    return true;
  }

  private noteBlocked(reason: "org_cap" | null, lease?: LeaseResult): void {
    const c = this.need();
    if ((c.blocked ?? null) === reason) return;
    this.db.run`UPDATE campaign SET blocked = ${reason}`;
    if (reason === "org_cap") {
      const what = lease && lease.cap >= 0 ? ` (${lease.inUse} of ${lease.cap} in use)` : "";
      this.log("warning", "org_cap_reached", `The organization's concurrent call limit is reached${what}; calls wait for a free slot`, { in_use: lease?.inUse ?? null, cap: lease?.cap ?? null });
    }
  }

  private loadPace(): void {
    const since = clock.now() - PACE_WINDOW_MS;
    this.pace.load(this.db.all<{ dialed_at: number }>`SELECT dialed_at FROM attempts WHERE dialed_at > ${since}`.map((r) => r.dialed_at));
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Persistence of what is derived: the alarm and the D1 summary row.

  /** After any change: write the summary when due (or at a transition) and point the alarm at the earliest timer. */
  private async settle(): Promise<void> {
    await this.flushSummary();
    await this.rearm();
  }

  private async rearm(): Promise<void> {
    const due = this.db.value<number>`SELECT min(due) FROM timers`;
    if (due === this.armedAt) return;
    if (due == null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(due);
    this.armedAt = due;
  }

  private async flushSummary(): Promise<void> {
    const c = this.campaign();
    if (!c) return;
    const now = clock.now();
    const force = this.forceSummary;
    if (!force && (!c.summary_dirty || now - c.summary_at < SUMMARY_INTERVAL_MS)) {
      const due = c.summary_at + SUMMARY_INTERVAL_MS;
      if (c.summary_dirty && this.summaryTimerAt !== due) {
        this.setTimer("summary", 0, due, "min");
        this.summaryTimerAt = due;
      }
      return;
    }
    this.forceSummary = false;
    const k = this.counts();
    // Cleared before the write: a change made while D1 answers marks it dirty again.
    this.db.run`UPDATE campaign SET summary_dirty = 0, summary_at = ${now}`;
    this.db.run`DELETE FROM timers WHERE kind = 'summary'`;
    this.summaryTimerAt = null;
    try {
      await this.env.DB.prepare(
        `UPDATE campaigns SET name = ?, state = ?, total_rows = ?, processed_rows = ?, failed_rows = ?, executed_count = ?, total_queued_count = ?,
           settings = ?, started_at = ?, completed_at = ?, redialed_campaign_id = coalesce(?, redialed_campaign_id), updated_at = ? WHERE id = ?`,
      )
        .bind(c.name, c.state, k.total, k.processed, k.failed, k.executed, k.queued, c.settings, c.started_at, c.completed_at, c.redialed_campaign_id, iso(now), c.campaign_id)
        .run();
    } catch (err) {
      console.warn(JSON.stringify({ level: "warning", event: "campaign_summary_failed", campaign_id: c.campaign_id, error: String(err) }));
      this.db.run`UPDATE campaign SET summary_dirty = 1`;
      this.setTimer("summary", 0, now + SUMMARY_INTERVAL_MS, "min");
      if (force) this.forceSummary = true;
    }
  }
}

/** The merged settings, checked against the same schemas as create and PATCH (defence in depth: RPC callers vary). */
function validateSettings(s: CampaignSettings): CampaignSettings {
  const parts = [
    ["retry_config", RetryConfig.safeParse(s.retry_config)],
    ["max_concurrency", MaxConcurrency.safeParse(s.max_concurrency)],
    ["rate_limit", RateLimit.safeParse(s.rate_limit)],
    ["schedule_config", s.schedule_config === null ? { success: true, data: null } : ScheduleConfig.safeParse(s.schedule_config)],
    ["circuit_breaker", CircuitBreaker.safeParse(s.circuit_breaker)],
  ] as const;
  for (const [name, r] of parts) {
    if (!r.success) throw new EngineError(422, `${name}: ${(r as { error: { issues: { message: string }[] } }).error.issues[0]?.message ?? "invalid"}`);
  }
  return {
    retry_config: (parts[0][1] as { data: CampaignSettings["retry_config"] }).data,
    max_concurrency: s.max_concurrency,
    rate_limit: s.rate_limit,
    schedule_config: (parts[3][1] as { data: CampaignSettings["schedule_config"] }).data,
    circuit_breaker: (parts[4][1] as { data: CampaignSettings["circuit_breaker"] }).data,
  };
}

// Refusals travel back as values (engine/faults.ts); the stubs in engine/stub.ts and view.ts rethrow them.
returnFaults(CampaignObject, FAULT_RETURNING_METHODS);
