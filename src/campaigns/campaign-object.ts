// One Durable Object per campaign (addressed by idFromName(String(campaignId))): the source of truth for the
// campaign's state, settings, contacts, attempts, timers and logs. Its RPC methods are the only way in.
//
// Correctness rules: an attempt is stored as `dialing` before the carrier is asked, and one found
// `dialing` after a restart is reconciled, never blindly re-dialed; call statuses are idempotent and a final one is
// never overwritten; one alarm serves a table of timers; the D1 summary row follows at transitions and every few
// seconds while running.
import { DurableObject } from "cloudflare:workers";
import { clock } from "../lib/clock";
import { DoSql, migrate, migrateOnStart, sql } from "../lib/do-sql";
import type { CampaignMeta, CampaignState, ContactInput } from "./object-api";
import type { CallStartResult, CampaignCallRef, CampaignCallRequest, CampaignCallStatus } from "../calls/campaign-calls";
import type { LeaseResult } from "../organizations/leases";
import { completeSettings, mergeSettings, validateSettings, type CampaignSettings } from "./settings";
import { breakerTrips, breakerWindowStart } from "./engine/breaker";
import { BackgroundImport } from "./csv/background";
import type { ImportSpec } from "./csv/rules";
import { CampaignEvents } from "./engine/events";
import { contactsPage, dispositionCounts, recordDisposition, type RunOutcome } from "./engine/contact-runs";
import { readCounts } from "./engine/counts";
import { startCampaignCallVia } from "./engine/call-starter";
import { countFinished, finishedPage, insertContacts } from "./engine/contacts";
import { leaseClient, type LeaseClient } from "./engine/leases";
import { EngineError, engineConflict } from "./errors";
import { FAULT_RETURNING_METHODS, returnFaults } from "./faults";
import { CampaignLog } from "./engine/logs";
import { PROGRESS_ORDER, isBreakerFailure, isFinalStatus } from "./outcomes";
import { packContacts, type PackedContacts } from "./packed";
import { PACE_WINDOW_MS, PaceWindow } from "./engine/pacing";
import { retryDueAt } from "./engine/retry";
import { runOfAttempt } from "./engine/run-records";
import { MIGRATIONS } from "./engine/schema";
import type { AttemptRow } from "./engine/attempts";
import type { CampaignRow } from "./engine/campaign-row";
import type { ContactRow } from "./engine/contacts";
import type { TimerRow } from "./engine/timers";
import { allowed, transition } from "./engine/state";
import { MAX_CALL_SECONDS, TIMEOUT_GRACE_SECONDS } from "../calls/call-length";
import { SummaryMirror } from "./engine/summary";
import { StagedContacts, appendLimits, type CommitResult, type StageResult } from "./engine/staged";
import { Timers } from "./engine/timers";
import type { CampaignCounts, CampaignProgress, CampaignSnapshot, LogPage, SettingsPatch } from "./engine/types";
import { CallingWindow } from "./engine/window";
import { RecipientHours } from "./engine/recipient-hours";
import { getDb } from "../lib/db";
import { loadCallingRules } from "../telephony/calling-policy";
import { defaultRules, type CallingRules } from "../telephony/calling-rules";

/** When the organization refuses a lease and no wake-up comes, ask again after this long. */
const ORG_RETRY_FALLBACK_MS = 5000;
/** How long the calling rules read from D1 are used before they are read again. */
const RULES_TTL_MS = 60_000;
/** Dials started per dispatch round at most (one organization RPC takes the round's leases). */
const MAX_ROUND = 100;
/**
 * Call starts awaiting the carrier at most: a round does not wait for the previous round's starts (a slow carrier
 * must not hold back the next dial), but no more than this many are outstanding at once.
 */
const MAX_STARTING = 50;
/**
 * A status batch dials into the slots it freed itself, before it answers, for this long at most (then the alarm
 * carries on); the alarm it sets this much later is only a fallback.
 */
const KICK_MAX_MS = 250;
const KICK_FALLBACK_MS = 1000;
/**
 * Wall time one alarm invocation spends dialing at most (real time, not the clock: it bounds the invocation, well
 * inside the runtime's limits). Dispatch only runs this long when calls end as fast as they start.
 */
const MAX_DISPATCH_MS = 20_000;

/**
 * A status batch's first round: the slots its final statuses will free (`extraRoom`, their leases in `release`) are
 * asked for before the statuses are written; `meanwhile` writes them once the request is on its way.
 */
type RoundHint = { extraRoom: number; release: string[]; meanwhile: () => void; sent?: boolean };

/** An attempt a final status can still close (OPEN_ATTEMPT in SQL). */
const isOpen = (a: AttemptRow) => a.status === "dialing" || a.status === "in_flight";
/** A status of another run than the one the attempt recorded (a stray callback): it changes nothing. */
const otherRun = (a: AttemptRow, s: CampaignCallStatus) => a.run_id != null && s.runId != null && a.run_id !== s.runId;
const OPEN_ATTEMPT = sql`status IN ('dialing', 'in_flight')`;
const attemptKey = (contactId: number, attempt: number) => `${contactId}:${attempt}`;
/** A contact whose attempt ended: its id, the outcome, and when it is tried again (null: it is done). */
type ContactEnd = [number, string, number | null];
/** Items grouped by a key of a few values (compared as text), each group's values in the items' order. */
function groupBy<T, K extends readonly (string | number)[], V>(items: T[], key: (t: T) => K, value: (t: T) => V): [K, V[]][] {
  const groups = new Map<string, [K, V[]]>();
  for (const t of items) {
    const k = key(t);
    const id = JSON.stringify(k);
    const g = groups.get(id);
    if (g) g[1].push(value(t));
    else groups.set(id, [k, [value(t)]]);
  }
  return [...groups.values()];
}
const iso = (ms: number) => new Date(ms).toISOString();

/** The organization lease of one attempt; the calls module sees it in CampaignCallRequest.leaseId. */
export const leaseIdFor = (campaignId: number, contactId: number, attempt: number) => `campaign:${campaignId}:${contactId}:${attempt}`;

export class CampaignObject extends DurableObject<Env> {
  private readonly db: DoSql;
  private readonly log: CampaignLog;
  private readonly timers: Timers;
  private readonly window: CallingWindow;
  private readonly summary: SummaryMirror;
  private readonly events: CampaignEvents;
  private readonly imports: BackgroundImport;
  private readonly staged: StagedContacts;
  private readonly pace = new PaceWindow();
  private readonly hours: RecipientHours;
  /** The organization's calling rules, read from D1 at most once a minute (changes apply within that and a read). */
  private rules: { at: number; value: CallingRules } | null = null;
  private rulesRead: Promise<CallingRules> | null = null;
  /** The dispatch loop running now, if any: one at a time, whether the alarm or a status batch started it. */
  private dispatchRun: Promise<void> | null = null;
  /** Set when something freed a slot or queued a contact while the loop ran: it goes round once more. */
  private dispatchAgain = false;
  private orgLeases: { orgId: number; client: LeaseClient } | null = null;
  /** Leases of attempts that ended, to give back to the organization (with the next round's acquire). */
  private readonly toRelease: string[] = [];
  /** Call starts waiting for the carrier's answer (at most MAX_STARTING): a round does not wait for them. */
  private readonly starting = new Set<Promise<void>>();
  /** Starts the carrier accepted, [attempt id, run id, call id], written together once this turn's answers are in. */
  private readonly accepted: [number, number, string | null][] = [];
  private settingsCache: { json: string; value: CampaignSettings } | null = null;
  /** Settles when the constructor's migration and reconciliation are done (in-process simulations await it). */
  readonly ready: Promise<void>;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = new DoSql(ctx.storage);
    this.log = new CampaignLog(this.db);
    this.hours = new RecipientHours(this.db, this.log);
    this.timers = new Timers(this.db, ctx.storage);
    this.window = new CallingWindow(
      this.db,
      this.timers,
      this.log,
      () => this.need(),
      (c) => this.settings(c).schedule_config,
    );
    this.summary = new SummaryMirror(this.db, this.timers, env);
    this.events = new CampaignEvents(ctx);
    this.imports = new BackgroundImport({
      db: this.db,
      storage: ctx.storage,
      env,
      log: this.log,
      timers: this.timers,
      changed: () => this.summary.force(),
    });
    this.staged = new StagedContacts(this.db, this.timers, this.log);
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
  // Creation: initialize, importContacts (chunks), finishImport, discard.

  /** Creates the campaign in `draft`. Repeating it for the same campaign is harmless. */
  async initialize(meta: CampaignMeta): Promise<CampaignSnapshot> {
    const existing = this.campaign();
    if (existing) {
      if (existing.campaign_id !== meta.campaignId) throw engineConflict("This campaign object already belongs to another campaign");
      return this.snapshot();
    }
    this.db.tx(() => this.create(meta, "draft"));
    return this.snapshot();
  }

  /** Creates the campaign in `importing` and starts importing its file here, in the background (csv/background.ts). */
  async beginImport(meta: CampaignMeta, spec: ImportSpec): Promise<CampaignSnapshot> {
    if (this.campaign()) throw engineConflict("This campaign object already belongs to a campaign");
    this.db.tx(() => {
      this.create(meta, "importing");
      this.imports.begin(spec);
    });
    await this.settle();
    return this.snapshot();
  }

  private create(meta: CampaignMeta, state: "draft" | "importing"): void {
    const settings = completeSettings(meta.settings as Record<string, unknown> | undefined);
    this.db
      .run`INSERT INTO campaign (id, campaign_id, org_id, name, workflow_id, telephony_configuration_id, source_id, parent_campaign_id, state, settings, created_at)
      VALUES (1, ${meta.campaignId}, ${meta.orgId}, ${meta.name}, ${meta.workflowId}, ${meta.telephonyConfigurationId}, ${meta.sourceId},
        ${meta.parentCampaignId ?? null}, ${state}, ${JSON.stringify(settings)}, ${iso(clock.now())})`;
    this.log.write("info", "campaign_created", `Campaign '${meta.name}' created`, meta.parentCampaignId ? { parent_campaign_id: meta.parentCampaignId } : {});
  }

  /** Adds one chunk of validated contacts; a phone number already in the campaign is reported, not inserted. */
  async importContacts(chunk: ContactInput[]): Promise<{ inserted: number; duplicates: { row: number; phone_number: string; first_row: number }[] }> {
    return this.importPacked(packContacts(chunk));
  }

  /** `importContacts` for a chunk the caller packed (packContacts): what the CSV import sends. */
  async importPacked(parts: PackedContacts): Promise<{ inserted: number; duplicates: { row: number; phone_number: string; first_row: number }[] }> {
    const c = this.need();
    if (c.import_done || c.state !== "draft") throw engineConflict("Contacts can only be added while the campaign is being created");
    return this.db.tx(() => insertContacts(this.db, parts));
  }

  /** Marks the contact list complete; the campaign can start from now on. */
  async finishImport(): Promise<{ total: number }> {
    const c = this.need();
    const total = this.db.value<number>`SELECT count(*) FROM contacts` ?? 0;
    if (!c.import_done) {
      this.db.tx(() => {
        this.db.run`UPDATE campaign SET import_done = 1, source_synced_at = ${iso(clock.now())}, summary_dirty = 1`;
        this.log.write("info", "source_sync_completed", `${total} contact${total === 1 ? "" : "s"} imported`, { total });
      });
    }
    return { total };
  }

  /** The source could not be read: draft or running → failed. */
  async failSource(message: string): Promise<CampaignSnapshot> {
    this.need();
    this.db.tx(() => {
      transition(this.db, "source_failed", clock.now(), message);
      this.log.write("error", "source_sync_failed", `The contact source could not be read: ${message}`, { error: message });
      this.log.write("error", "campaign_failed", "Campaign failed", { reason: "source_sync_failed" });
      this.skipRemaining();
    });
    this.summary.force();
    await this.settle();
    return this.snapshot();
  }

  /** Wipes everything (used when create fails midway). The object is blank afterwards. */
  async discard(): Promise<{ discarded: true }> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.timers.unarmed();
    this.settingsCache = null;
    this.window.forget();
    this.summary.timerGone();
    this.pace.load([]);
    migrate(this.db, MIGRATIONS);
    return { discarded: true };
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Appending contacts (POST /campaign/{id}/contacts, ../append.ts): beginAppend, stageAppend (chunks),
  // commitAppend or discardAppend. Staged rows are invisible until the commit adds them all at once (engine/staged.ts).

  /** Opens an append for `orgId`'s campaign: 404 for another organization, 409 unless it takes contacts now. */
  async beginAppend(orgId: number): Promise<{ token: string }> {
    const c = this.need();
    if (c.org_id !== orgId) throw new EngineError(404, "Campaign not found");
    this.appendable(c);
    const token = this.db.tx(() => this.staged.begin(clock.now(), Math.max(0, appendLimits.maxRows - this.counts().total)));
    await this.timers.rearm();
    return { token };
  }

  /** Stages one packed chunk of the appended file (row order); duplicates within the file are reported. */
  async stageAppend(token: string, parts: PackedContacts): Promise<StageResult> {
    this.need();
    return this.db.tx(() => this.staged.stage(token, parts, clock.now()));
  }

  /** Adds every staged contact in one transaction and drops the batch; a running campaign dials them. */
  async commitAppend(token: string, sourceUrl: string): Promise<CommitResult & { total_rows: number; state: CampaignState }> {
    const c = this.need();
    const now = clock.now();
    try {
      // The campaign may have finished (or been cancelled) while the file was read: nothing is added then.
      this.appendable(c);
    } catch (err) {
      await this.discardAppend(token);
      throw err;
    }
    const r = this.db.tx(() => {
      const res = this.staged.commit(token);
      const total = this.counts().total;
      const skipped = res.skipped_existing ? `; ${res.skipped_existing} already in the campaign skipped` : "";
      this.log.write("info", "contacts_appended", `${res.added} contact${res.added === 1 ? "" : "s"} added${skipped}`, {
        added: res.added,
        skipped_existing: res.skipped_existing,
        total,
        source_url: sourceUrl,
      });
      this.markDirty();
      // Nothing new (every number was known): the completion this append held back may be due now.
      if (c.state === "running" && !this.checkCompletion(now)) this.pokeDispatch(now);
      return { ...res, total_rows: total, state: c.state };
    });
    this.summary.force();
    await this.settle();
    return r;
  }

  /** Drops the append `token` opened (its file did not pass, or its request failed). */
  async discardAppend(token: string): Promise<{ discarded: boolean }> {
    const discarded = this.db.tx(() => {
      const gone = this.staged.discard(token);
      if (gone && this.checkCompletion(clock.now())) this.summary.force();
      return gone;
    });
    await this.settle();
    return { discarded };
  }

  /** 409 unless the campaign takes contacts now: draft (its first import done), running or paused. */
  private appendable(c: CampaignRow): void {
    allowed(c.state, "append");
    if (!c.import_done) throw engineConflict("Cannot add contacts to a campaign whose contacts are still being imported");
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
      next_window_at: this.window.nextOpening(c),
      logs: this.log.newest(100),
      import_error: this.imports.failure(),
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
      imported_rows: k.total,
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
      retry_waiting: k.awaiting_retry,
      in_progress: k.in_progress,
      completion_percentage: pct,
      next_window_at: this.window.nextOpening(c),
      dispositions: dispositionCounts(this.db),
      calling_rules: { held_local_hours: this.hours.held(), skipped: this.hours.skips() },
    };
  }

  /**
   * progress() for the Worker's route without a D1 lookup first: null (the route's 404, as for an unknown campaign)
   * unless the campaign is `orgId`'s and no longer being created (a create or redial fills a `draft` until finishImport).
   */
  async progressFor(orgId: number): Promise<CampaignProgress | null> {
    const c = this.campaign();
    if (!c || c.org_id !== orgId || (c.state === "draft" && !c.import_done)) return null;
    return this.progress();
  }

  /** Contacts in row order with their attempts' runs and dispositions, a page after contact id `after`. */
  async contacts(after: number, limit: number, withContext = false): Promise<ReturnType<typeof contactsPage>> {
    this.need();
    return contactsPage(this.db, after, limit, withContext);
  }

  /** Logs newest first, `limit` per page, continuing below log id `before`. */
  async logs(limit = 50, before: number | null = null): Promise<LogPage> {
    this.need();
    return this.log.page(limit, before);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Operations.

  async start(): Promise<CampaignSnapshot> {
    const c = this.need();
    if (c.state === "paused") return this.resume();
    allowed(c.state, "start");
    if (!c.import_done) throw engineConflict("Cannot start a campaign whose contacts are still being imported");
    const now = clock.now();
    this.db.tx(() => {
      transition(this.db, "start", now);
      this.log.write("info", "campaign_started", "Campaign started", {});
      this.onRunning(now);
    });
    this.summary.force();
    await this.settle();
    return this.snapshot();
  }

  async resume(): Promise<CampaignSnapshot> {
    this.need();
    const now = clock.now();
    this.db.tx(() => {
      transition(this.db, "resume", now);
      this.log.write("info", "campaign_resumed", "Campaign resumed", {});
      this.onRunning(now);
    });
    this.summary.force();
    await this.settle();
    return this.snapshot();
  }

  async pause(): Promise<CampaignSnapshot> {
    this.need();
    this.db.tx(() => {
      transition(this.db, "pause", clock.now());
      const inFlight = this.openAttempts();
      this.log.write("info", "campaign_paused", "Campaign paused; calls in progress finish", { in_progress: inFlight });
      this.clearRunningTimers();
    });
    this.summary.force();
    await this.settle();
    return this.snapshot();
  }

  async cancel(): Promise<CampaignSnapshot> {
    this.need();
    this.db.tx(() => {
      transition(this.db, "cancel", clock.now());
      const skipped = this.skipRemaining();
      this.log.write("info", "campaign_cancelled", "Campaign cancelled; pending contacts skipped, calls in progress finish", {
        skipped,
        in_progress: this.openAttempts(),
      });
      this.clearRunningTimers();
    });
    this.summary.force();
    await this.settle();
    return this.snapshot();
  }

  /** PATCH: merges the change over the current settings; it takes effect at once. 409 once finished. */
  async updateSettings(patch: SettingsPatch): Promise<CampaignSnapshot> {
    const c = this.need();
    allowed(c.state, "update");
    const cur = this.settings(c);
    const merged = mergeSettings(cur, patch);
    const check = validateSettings(merged);
    if (!check.ok) throw new EngineError(422, `${String(check.issues[0]?.path[0] ?? "settings")}: ${check.issues[0]?.message ?? "invalid"}`);
    const checked = check.settings;
    const name = patch.name !== undefined ? patch.name : c.name;
    if (typeof name !== "string" || name.length < 1 || name.length > 255) throw new EngineError(422, "name must be 1 to 255 characters");
    const changed = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
    const now = clock.now();
    this.db.tx(() => {
      this.db.run`UPDATE campaign SET settings = ${JSON.stringify(checked)}, name = ${name}, summary_dirty = 1`;
      this.window.settingsChanged();
      this.log.write("info", "settings_updated", `Settings updated: ${changed.join(", ") || "nothing"}`, { fields: changed });
      if (c.state === "running") {
        this.window.refresh(now);
        this.checkBreaker(now);
        this.pokeDispatch(now);
      }
    });
    this.summary.force();
    await this.settle();
    return this.snapshot();
  }

  /** A nudge (from the organization object when a slot frees): try dialing again now. */
  async wake(): Promise<void> {
    const c = this.campaign();
    if (c?.state !== "running") return;
    this.pokeDispatch(clock.now());
    await this.timers.rearm();
  }

  /** A call status from the calls module (onCallStatuses with one). */
  async onCallStatus(s: CampaignCallStatus): Promise<{ applied: boolean }> {
    return (await this.onCallStatuses([s]))[0];
  }

  /**
   * Call statuses from the calls module, several calls' callbacks in one RPC, in the order they arrived. Each is
   * applied alone (duplicates, reorderings and unknown attempts change nothing; a final status is applied once);
   * then, once for the batch: the leases are released in one call, the breaker and completion are checked, and the
   * freed slots are dialed at once rather than at the next alarm.
   */
  async onCallStatuses(batch: CampaignCallStatus[]): Promise<{ applied: boolean }[]> {
    const c = this.campaign();
    if (!c) return batch.map(() => ({ applied: false }));
    const now = clock.now();
    const leases: string[] = [];
    let finished = 0;
    let results: { applied: boolean }[] | null = null;
    const apply = () => {
      if (results) return;
      results = this.db.tx(() => {
        const out = this.applyCallStatuses(c, batch, now, leases);
        finished = out.finished;
        if (finished) this.afterFinish(now, true);
        return out.results;
      });
    };
    // The slots these statuses free are asked for before the statuses are written: an object's request waits until
    // its writes are stored, so the round's lease request goes first and the statuses are applied when its answer is
    // back (the round's `meanwhile`). Their leases go back in that same request.
    const freeing = c.state === "running" && !this.dispatchRun ? this.slotsFreedBy(batch) : null;
    const early: RoundHint | null = freeing?.count ? { extraRoom: freeing.count, release: freeing.leases, meanwhile: apply } : null;
    if (early) await this.dispatchSafely(false, KICK_MAX_MS, early);
    apply();
    // The freed slots are dialed now (the carriers' answers are not awaited), not at the next alarm; a loop already
    // running (the alarm's) goes round once more instead. The leases go back with the next round's acquire (one
    // call to the organization object), or on their own if no round took them.
    this.toRelease.push(...(early?.sent ? leases.filter((l) => !early.release.includes(l)) : leases));
    // A round that sent the early request already looked again after the statuses were written.
    if (finished && !early?.sent) await this.dispatchSafely(false, KICK_MAX_MS);
    // A loop still running goes round again and takes them with its acquire (or releases them when it ends).
    if (this.toRelease.length && !this.dispatchRun) await this.releaseLeases(c.org_id, this.toRelease.splice(0));
    // No D1 write here (the summary's periodic refresh goes to the alarm), unless a transition needs it now.
    await this.settle(false);
    return results!;
  }

  /**
   * The carrier's call ids of these calls, by run id (those it knows). A campaign's call writes nothing to D1 when the
   * carrier accepts it, so until its answer or final status the call id is only here: the calls module asks for it to
   * show a run or hang it up.
   */
  async callIdsOf(calls: CampaignCallRef[]): Promise<Record<number, string>> {
    const attempts = this.attemptsOf(calls);
    const out: Record<number, string> = {};
    for (const r of calls) {
      const a = attempts.get(attemptKey(r.contactId, r.attempt));
      if (a?.provider_call_id && a.run_id === r.runId) out[r.runId] = a.provider_call_id;
    }
    return out;
  }

  /**
   * Read only: how many open attempts the final statuses of `batch` will close, and their leases (the same checks as
   * applyCallStatuses). Safe to act on before they are applied: an attempt only ever closes, so a lease released here
   * is one whose call is over, whoever records it.
   */
  private slotsFreedBy(batch: CampaignCallStatus[]): { count: number; leases: string[] } {
    const attempts = this.attemptsOf(batch);
    const seen = new Set<number>();
    const leases: string[] = [];
    for (const s of batch) {
      if (!isFinalStatus(s.status)) continue;
      const a = attempts.get(attemptKey(s.contactId, s.attempt));
      if (!a || seen.has(a.id) || !isOpen(a) || otherRun(a, s)) continue;
      seen.add(a.id);
      if (a.lease_id) leases.push(a.lease_id);
    }
    return { count: seen.size, leases };
  }

  /** The attempts a batch's statuses name, by attemptKey (one statement). */
  private attemptsOf(batch: Pick<CampaignCallRef, "contactId" | "attempt">[]): Map<string, AttemptRow> {
    const pairs = JSON.stringify(batch.map((s) => [s.contactId, s.attempt]));
    const out = new Map<string, AttemptRow>();
    // The list drives the join (CROSS JOIN keeps that order), so each pair is one lookup in the (contact_id, attempt) index.
    for (const a of this.db.all<AttemptRow>`SELECT a.* FROM json_each(${pairs}) AS j CROSS JOIN attempts AS a
      ON a.contact_id = j.value ->> 0 AND a.attempt = j.value ->> 1`)
      out.set(attemptKey(a.contact_id, a.attempt), a);
    return out;
  }

  /**
   * A batch's statuses (inside its transaction), one by one in the order they came, each judged against its attempt as
   * the statuses before it left it; the attempts they end are written together (a fixed number of statements, as
   * closeAttempt writes one). Its leases are added to `leases`.
   */
  private applyCallStatuses(c: CampaignRow, batch: CampaignCallStatus[], now: number, leases: string[]): { results: { applied: boolean }[]; finished: number } {
    const attempts = this.attemptsOf(batch);
    const closes: [number, string, number, number | null][] = []; // attempt, outcome, breaker failure, run id learned
    const ends: ContactEnd[] = [];
    const results = batch.map((st) => {
      const a = attempts.get(attemptKey(st.contactId, st.attempt));
      if (!a || otherRun(a, st)) {
        this.log.write("warning", "call_status_ignored", "A call status arrived for an attempt this campaign does not know; ignored", {
          run_id: st.runId,
          contact_id: st.contactId,
          attempt: st.attempt,
          status: st.status,
        });
        return { applied: false };
      }
      if (!isOpen(a)) return { applied: false }; // already final
      if (!isFinalStatus(st.status)) {
        const rank = PROGRESS_ORDER[st.status];
        if (rank === undefined) return { applied: false };
        const prev = a.last_status ? (PROGRESS_ORDER[a.last_status] ?? -1) : -1;
        if (rank <= prev && a.run_id != null) return { applied: false };
        this.db.run`UPDATE attempts SET last_status = CASE WHEN ${rank} > coalesce(${prev}, -1) THEN ${st.status} ELSE last_status END,
          run_id = coalesce(run_id, ${st.runId ?? null}) WHERE id = ${a.id}`;
        if (rank > prev) a.last_status = st.status;
        a.run_id ??= st.runId ?? null;
        return { applied: true };
      }
      const at = Date.parse(st.at);
      const atMs = Number.isFinite(at) ? Math.min(at, now) : now;
      // The run id, when this status is how the attempt learns it.
      const learned = a.run_id == null ? (st.runId ?? null) : null;
      a.run_id ??= learned;
      a.status = st.status;
      closes.push([a.id, st.status, isBreakerFailure(st.status) ? 1 : 0, learned]);
      ends.push(this.contactEnd(c, a, st.status, atMs, false));
      if (a.lease_id) leases.push(a.lease_id);
      return { applied: true };
    });
    if (closes.length) {
      const at = clock.now();
      // One statement per kind of end (a handful: the outcomes), each over its ids through the primary key.
      for (const [[outcome, failure], ids] of groupBy(
        closes,
        (x) => [x[1], x[2]] as const,
        (x) => x[0],
      ))
        this.db.run`UPDATE attempts SET status = ${outcome}, ended_at = ${at}, failure = ${failure}
          WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND ${OPEN_ATTEMPT}`;
      for (const [id, , , runId] of closes) if (runId != null) this.db.run`UPDATE attempts SET run_id = ${runId} WHERE id = ${id} AND run_id IS NULL`;
      this.db.run`DELETE FROM timers WHERE kind = 'timeout' AND ref IN (SELECT value FROM json_each(${JSON.stringify(closes.map((x) => x[0]))}))`;
      this.endContacts(ends);
    }
    return { results, finished: closes.length };
  }

  /** A call's session ended with the agent's disposition (idempotent). */
  async onRunOutcome(o: RunOutcome): Promise<{ applied: boolean }> {
    if (!this.campaign()) return { applied: false };
    return { applied: recordDisposition(this.db, this.log, o) };
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Redial (the child is created by ../redial.ts through these).

  /** What a redial child needs from its parent; 409 unless the parent is completed or cancelled. */
  async redialPlan(outcomes: string[]): Promise<{ meta: Omit<CampaignMeta, "campaignId">; count: number }> {
    const c = this.need();
    allowed(c.state, "redial");
    const count = countFinished(this.db, outcomes);
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
    return finishedPage(this.db, outcomes, afterId, limit);
  }

  /** Records the newest redial child. */
  async linkRedial(childId: number, count: number): Promise<void> {
    this.need();
    this.db.tx(() => {
      this.db.run`UPDATE campaign SET redialed_campaign_id = ${childId}, summary_dirty = 1`;
      this.log.write("info", "campaign_redialed", `Redial campaign ${childId} created with ${count} contact${count === 1 ? "" : "s"}`, {
        redialed_campaign_id: childId,
        contacts: count,
      });
    });
    this.summary.force();
    await this.settle();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The alarm: due timers first (each isolated), then dispatch, then the summary, then re-arm.

  async alarm(): Promise<void> {
    this.timers.unarmed();
    const c = this.campaign();
    if (!c) return;
    const now = clock.now();
    for (const t of this.timers.due(now)) {
      try {
        await this.fireTimer(t, now);
      } catch (err) {
        this.timerFailed(t, err, now);
      }
    }
    await this.dispatchSafely();
    if (this.campaign()?.state === "running") this.hours.assignAhead();
    await this.settle();
  }

  private async fireTimer(t: TimerRow, now: number): Promise<void> {
    // Taken off first: an alarm delivered twice finds nothing left to do.
    if (!this.timers.take(t)) return;
    switch (t.kind) {
      case "import":
        await this.imports.run();
        return;
      case "staged":
        this.staged.expire(now);
        if (this.checkCompletion(now)) this.summary.force();
        return;
      case "summary":
        this.summary.timerGone();
        return; // the summary is written after the timers anyway
      case "dispatch":
        return; // dispatch runs after the timers anyway
      case "window":
        this.window.timerGone();
        this.window.refresh(now);
        return;
      case "retry": {
        // The delay is over; the contact queues again (ahead of never-attempted ones) and waits for a window.
        const n = this.db.run`UPDATE contacts SET status = 'queued', queue_key = ${t.due} WHERE id = ${t.ref} AND status = 'waiting'`;
        if (n) this.markDirty();
        return;
      }
      case "timeout": {
        const a = this.db.one<AttemptRow>`SELECT * FROM attempts WHERE id = ${t.ref}`;
        if (!a || !isOpen(a)) return;
        const done = await this.finishAttempt(a, "unknown", now, { noRetry: true, error: "No final status before the call timeout" });
        if (done) {
          const ct = this.db.one<ContactRow>`SELECT phone_number FROM contacts WHERE id = ${a.contact_id}`;
          this.log.write(
            "warning",
            "call_timed_out",
            `No final status for ${ct?.phone_number ?? "a contact"} within ${MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS}s; outcome unknown, not retried`,
            {
              contact_id: a.contact_id,
              attempt: a.attempt,
              run_id: a.run_id,
            },
          );
        }
        return;
      }
      default:
        this.log.write("warning", "timer_unknown", `Dropped a timer of unknown kind '${t.kind}'`, { kind: t.kind, ref: t.ref });
    }
  }

  /** A timer that throws is retried with backoff, then dropped; it never blocks the rest of the alarm. */
  private timerFailed(t: TimerRow, err: unknown, now: number): void {
    try {
      const { fails, dropped } = this.timers.failed(t, now);
      this.log.write("error", "timer_failed", `Timer ${t.kind}:${t.ref} failed${dropped ? " and was dropped" : "; retrying"}`, {
        kind: t.kind,
        ref: t.ref,
        fails,
        error: String(err),
      });
    } catch (inner) {
      console.error(JSON.stringify({ level: "error", event: "timer_failed", kind: t.kind, ref: t.ref, error: String(err), inner: String(inner) }));
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Dispatch.

  /** dispatch() with a failure logged and retried shortly (by the alarm). */
  private async dispatchSafely(awaitStarts = true, maxMs = MAX_DISPATCH_MS, first?: RoundHint): Promise<void> {
    try {
      await this.dispatch(awaitStarts, maxMs, first);
    } catch (err) {
      this.log.write("error", "dispatch_error", "Dispatching calls failed; retrying shortly", { error: String(err) });
      this.timers.atMost("dispatch", 0, clock.now() + ORG_RETRY_FALLBACK_MS);
    }
  }

  /**
   * The dispatch loop, one at a time: a caller that finds it running marks it to go round once more and returns (it
   * does not wait: that loop may be waiting on a carrier). `awaitStarts`: also wait for the carriers' answers to the
   * calls this loop started, and look again after them. `maxMs`: wall time for the loop, after which the alarm (due at
   * once) carries on.
   */
  private async dispatch(awaitStarts: boolean, maxMs: number, first?: RoundHint): Promise<void> {
    if (this.dispatchRun) {
      this.dispatchAgain = true;
      return;
    }
    const run = (async () => {
      try {
        await this.dispatchLoop(awaitStarts, maxMs, first);
      } finally {
        this.dispatchRun = null;
      }
      // Leases final statuses left for a next round that did not come.
      const c = this.campaign();
      if (c && this.toRelease.length) await this.releaseLeases(c.org_id, this.toRelease.splice(0));
    })();
    this.dispatchRun = run;
    return run;
  }

  private async dispatchLoop(awaitStarts: boolean, maxMs: number, first?: RoundHint): Promise<void> {
    const since = Date.now();
    // The starts this loop made (an earlier loop's are not waited for here: that loop's caller did not wait either).
    const mine = new Set<Promise<void>>();
    try {
      for (;;) {
        this.dispatchAgain = false;
        const more = await this.dispatchRound(mine, first);
        first = undefined;
        if (!more && !this.dispatchAgain) {
          if (!awaitStarts || !mine.size) break;
          // Starts still out may free a slot (a refusal) or change the state (a configuration error): look again after.
          await Promise.all(mine);
          continue;
        }
        if (Date.now() - since >= maxMs) {
          // Bounded work per invocation: the next alarm, due at once, carries on.
          if (this.campaign()?.state === "running") this.pokeDispatch(clock.now());
          break;
        }
      }
    } finally {
      if (awaitStarts) await Promise.all(mine);
    }
  }

  /**
   * One round: pick what may start now, take leases, record `dialing`, then start the calls (not awaited: they join
   * `starting`, of which a round waits until fewer than MAX_STARTING are out). True: go again.
   */
  private async dispatchRound(mine: Set<Promise<void>>, hint?: RoundHint): Promise<boolean> {
    if (hint && this.starting.size >= MAX_STARTING) return false; // not now: the statuses are applied first, then again
    while (this.starting.size >= MAX_STARTING) await Promise.race(this.starting);
    let c = this.campaign();
    if (!c || c.state !== "running") return false;
    let now = clock.now();
    let s = this.settings(c);
    if (!this.window.refresh(now)) return false;
    const room = s.max_concurrency - this.openAttempts() + (hint?.extraRoom ?? 0);
    if (room <= 0) return false; // a final status or a timeout pokes dispatch again
    const budget = this.pace.budget(s.rate_limit, now);
    if (budget <= 0) {
      this.timers.atMost("dispatch", 0, this.pace.nextAt(s.rate_limit, now));
      return false;
    }
    const rules = await this.callingRules(c);
    const want = Math.min(room, budget, MAX_ROUND);
    // Only contacts whose local hours are open now; zones are given out in queue order until enough are found, as
    // many at a time as the round wants (the alarm gives them out ahead in batches: no round carries one).
    const pick = () =>
      this.db.all<ContactRow>`SELECT id, attempts, phone_number FROM contacts WHERE status = 'queued'
        AND zone_id IN (SELECT id FROM zones WHERE open = 1) ORDER BY queue_key, id LIMIT ${want}`;
    const nextZone = this.hours.refresh(now, rules.localHours);
    let picks = pick();
    while (picks.length < want && this.hours.assign(want) > 0) {
      this.hours.refresh(now, rules.localHours);
      picks = pick();
    }
    const zoneOpens = this.hours.refresh(now, rules.localHours) ?? nextZone;
    if (zoneOpens != null) this.timers.atMost("dispatch", 0, zoneOpens);
    if (!picks.length) {
      if (this.checkCompletion(now)) this.summary.force();
      return false;
    }

    const org = this.leases(c.org_id);
    const ttlSeconds = MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS + 60;
    const leaseIds = picks.map((p) => leaseIdFor(c!.campaign_id, p.id, p.attempts + 1));
    const cap = rules.attemptCap.enabled ? { max: rules.attemptCap.max_attempts, windowMs: rules.attemptCap.window_hours * 3_600_000 } : null;
    // Leases that final statuses freed go in the same call, released before anything is granted.
    const freed = [...this.toRelease.splice(0), ...(hint?.release ?? [])];
    const asked = org
      .acquireMany(
        leaseIds.map((leaseId, i) => ({ leaseId, ttlSeconds, waiter: c!.campaign_id, dial: { number: picks[i].phone_number, cap } })),
        freed.length ? freed : undefined,
      )
      .catch((err): LeaseResult[] => {
        console.warn(JSON.stringify({ level: "warning", event: "lease_acquire_failed", campaign_id: c!.campaign_id, error: String(err) }));
        this.toRelease.push(...freed); // perhaps not released: again with the next call (releasing is idempotent)
        return leaseIds.map(() => ({ granted: false, inUse: -1, cap: -1, retryAfterSeconds: ORG_RETRY_FALLBACK_MS / 1000 }));
      });
    // The statuses are written once the answer is back: writes made before it went out would hold the request until
    // they are stored.
    if (hint) hint.sent = true;
    const leases = await asked;
    hint?.meanwhile();

    // The world may have moved while the leases were requested: check everything again before recording.
    c = this.campaign();
    now = clock.now();
    if (!c) return false;
    s = this.settings(c);
    const go = c.state === "running" && this.window.at(now).open;
    let room2 = s.max_concurrency - this.openAttempts();
    let budget2 = this.pace.budget(s.rate_limit, now);
    let refused: LeaseResult | null = null;
    const chosen: { contactId: number; leaseId: string }[] = [];
    const unused: string[] = [];
    const skipped: { contact: ContactRow; lease: LeaseResult }[] = [];
    picks.forEach((p, i) => {
      if (leases[i].skip) skipped.push({ contact: p, lease: leases[i] });
      else if (!leases[i].granted) refused = leases[i];
      else if (!go || room2 <= 0 || budget2 <= 0) unused.push(leaseIds[i]);
      else {
        chosen.push({ contactId: p.id, leaseId: leaseIds[i] });
        room2--;
        budget2--;
      }
    });
    const campaign = c;
    const started = this.db.tx(() => {
      const out = this.recordDialing(chosen, now, unused);
      if (refused) this.noteBlocked("org_cap", refused);
      else if (out.length) this.noteBlocked(null);
      this.applySkips(skipped, now);
      return out;
    });
    if (refused) this.timers.atMost("dispatch", 0, now + Math.max(1, (refused as LeaseResult).retryAfterSeconds ?? 5) * 1000);
    if (unused.length) await this.releaseLeases(campaign.org_id, unused, true);
    for (const x of started) {
      const p: Promise<void> = this.startOne(campaign, x.attempt, x.contact)
        .catch((err) => {
          this.log.write("error", "dispatch_error", "Recording a call start failed", { contact_id: x.contact.id, error: String(err) });
        })
        .finally(() => {
          this.starting.delete(p);
          mine.delete(p);
        });
      this.starting.add(p);
      mine.add(p);
    }
    return (started.length > 0 || skipped.length > 0) && !refused;
  }

  /**
   * Dials a calling rule refused: a suppressed number is never called (final `suppressed`), one over the attempt
   * cap waits until the cap allows it (no attempt used). Each is counted and logged with its reason.
   */
  private applySkips(skipped: { contact: ContactRow; lease: LeaseResult }[], now: number): void {
    for (const { contact, lease } of skipped) {
      const where = { contact_id: contact.id, phone_number: contact.phone_number };
      if (lease.skip === "suppressed") {
        if (!this.db.run`UPDATE contacts SET status = 'done', outcome = 'suppressed' WHERE id = ${contact.id} AND status = 'queued'`) continue;
        this.log.write("info", "dial_skipped", `${contact.phone_number} is on the organization's suppression list; not called`, {
          ...where,
          reason: "suppressed",
        });
      } else {
        const at = Math.max(now + 1000, lease.retryAt ?? now + ORG_RETRY_FALLBACK_MS);
        if (!this.db.run`UPDATE contacts SET status = 'waiting' WHERE id = ${contact.id} AND status = 'queued'`) continue;
        this.timers.set("retry", contact.id, at);
        this.log.write(
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
      this.hours.countSkip(lease.skip!, 1);
      this.markDirty();
    }
    if (skipped.length && this.checkCompletion(now)) this.summary.force();
  }

  /**
   * The organization's calling rules, read from D1 at most once a minute. Once known, a stale copy serves the round
   * while one re-read runs beside it, so a D1 read never holds up a dial (a change applies within a minute and one
   * read); the last known (or the defaults) when D1 fails.
   */
  private async callingRules(c: CampaignRow): Promise<CallingRules> {
    const now = clock.now();
    const known = this.rules;
    if (known && now - known.at < RULES_TTL_MS && now >= known.at) return known.value;
    this.rulesRead ??= this.readRules(c, now).finally(() => {
      this.rulesRead = null;
    });
    return known ? known.value : await this.rulesRead;
  }

  private async readRules(c: CampaignRow, now: number): Promise<CallingRules> {
    let value = this.rules?.value ?? defaultRules(this.env);
    try {
      value = await loadCallingRules(getDb(this.env), c.org_id, defaultRules(this.env));
    } catch (err) {
      console.warn(JSON.stringify({ level: "warning", event: "calling_rules_unreadable", campaign_id: c.campaign_id, error: String(err) }));
    }
    this.rules = { at: now, value };
    return value;
  }

  /**
   * The exactly-once step: each chosen contact's attempt exists as `dialing` (with its timeout) before anyone is asked
   * to call. A round's contacts in a fixed number of statements (per-row statements cost most of a round's time); a
   * contact no longer queued, or whose lease names another attempt, is left out and its lease added to `unused`.
   */
  private recordDialing(chosen: { contactId: number; leaseId: string }[], now: number, unused: string[]): { attempt: AttemptRow; contact: ContactRow }[] {
    if (!chosen.length) return [];
    const campaignId = this.need().campaign_id;
    const ids = JSON.stringify(chosen.map((ch) => ch.contactId));
    const queued = new Map<number, ContactRow>();
    for (const ct of this.db.all<ContactRow>`SELECT * FROM contacts WHERE id IN (SELECT value FROM json_each(${ids})) AND status = 'queued'`)
      queued.set(ct.id, ct);
    const go: [number, number, string][] = [];
    for (const ch of chosen) {
      const contact = queued.get(ch.contactId);
      if (contact && ch.leaseId === leaseIdFor(campaignId, ch.contactId, contact.attempts + 1)) go.push([ch.contactId, contact.attempts + 1, ch.leaseId]);
      else unused.push(ch.leaseId);
    }
    if (!go.length) return [];
    const rows = JSON.stringify(go);
    const attempts = this.db.all<AttemptRow>`INSERT INTO attempts (contact_id, attempt, status, lease_id, dialed_at)
      SELECT value ->> 0, value ->> 1, 'dialing', value ->> 2, ${now} FROM json_each(${rows}) ORDER BY key RETURNING *`;
    this.db.run`UPDATE contacts SET status = 'active', attempts = attempts + 1 WHERE id IN (SELECT value ->> 0 FROM json_each(${rows}))`;
    this.timers.setMany(
      "timeout",
      attempts.map((a) => a.id),
      now + (MAX_CALL_SECONDS + TIMEOUT_GRACE_SECONDS) * 1000,
    );
    this.markDirty();
    const byContact = new Map(attempts.map((a) => [a.contact_id, a]));
    return go.map(([contactId]) => {
      this.pace.record(now);
      return { attempt: byContact.get(contactId)!, contact: queued.get(contactId)! };
    });
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
      voicemailAction: this.settings(c).voicemail_action,
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
        this.log.write("error", "dial_failed", `Starting the call to ${ct.phone_number} failed unexpectedly; it may have been placed, so it is not retried`, {
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
      const undone = this.db.tx(() => {
        const n = this.db.run`DELETE FROM attempts WHERE id = ${a.id} AND status = 'dialing'`;
        if (!n) return false;
        this.db.run`UPDATE contacts SET status = 'queued', attempts = attempts - 1 WHERE id = ${ct.id} AND status = 'active'`;
        this.timers.clear("timeout", a.id);
        this.markDirty();
        if (r.kind === "capacity") {
          this.noteBlocked("org_cap", { granted: false, inUse: -1, cap: -1 });
          this.timers.atMost("dispatch", 0, now + ORG_RETRY_FALLBACK_MS);
        } else {
          this.log.write("error", "dial_failed", `Cannot start calls: ${r.message}`, { ...where, kind: r.kind, error: r.message });
          const cur = this.need();
          if (cur.state === "running") {
            transition(this.db, "pause", now);
            this.log.write("warning", "campaign_paused", "Campaign paused until the configuration is fixed; resume to continue", {
              reason: "configuration",
              error: r.message,
            });
            this.clearRunningTimers();
            this.summary.force();
          }
        }
        return true;
      });
      if (undone && a.lease_id) await this.releaseLeases(c.org_id, [a.lease_id], true);
      return;
    }
    // The carrier refused or the number is invalid: a final `failed`, never retried, and a breaker failure.
    if (r.runId != null) this.db.run`UPDATE attempts SET run_id = coalesce(run_id, ${r.runId}) WHERE id = ${a.id}`;
    const fresh = this.db.one<AttemptRow>`SELECT * FROM attempts WHERE id = ${a.id}`!;
    await this.finishAttempt(fresh, "failed", now, { error: r.message });
    // Logged even when the run's own `failed` status already finished the attempt (it reaches the campaign
    // before this reply does): the log is where an operator reads why the carrier refused.
    this.log.write("warning", "dial_failed", `The call to ${ct.phone_number} was not placed: ${r.message}`, {
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
      this.db.run`UPDATE attempts SET status = CASE WHEN status = 'dialing' THEN 'in_flight' ELSE status END,
        run_id = coalesce(run_id, j.value ->> 1), provider_call_id = coalesce(provider_call_id, j.value ->> 2)
        FROM json_each(${rows}) AS j WHERE attempts.id = j.value ->> 0`;
    } catch (err) {
      this.log.write("error", "dispatch_error", "Recording call starts failed", { calls: calls.length, error: String(err) });
    }
  }

  /**
   * Ends an open attempt with a final outcome: frees the slot (and lease), schedules a retry when the policy says so,
   * feeds the breaker and completes the campaign when nothing is left. False when the attempt was already final.
   */
  private async finishAttempt(a: AttemptRow, outcome: string, atMs: number, opts: { noRetry?: boolean; error?: string }): Promise<boolean> {
    const c = this.need();
    const leases: string[] = [];
    const applied = this.db.tx(() => {
      if (!this.closeAttempt(c, a, outcome, atMs, opts, leases)) return false;
      this.afterFinish(clock.now(), false);
      return true;
    });
    if (leases.length) await this.releaseLeases(c.org_id, leases);
    return applied;
  }

  /**
   * The attempt's part of finishAttempt (in the caller's transaction): its outcome, its contact's retry or end, its
   * lease added to `leases` for the caller to release. False when it was already final.
   */
  private closeAttempt(c: CampaignRow, a: AttemptRow, outcome: string, atMs: number, opts: { noRetry?: boolean; error?: string }, leases: string[]): boolean {
    const now = clock.now();
    const n = this.db.run`UPDATE attempts SET status = ${outcome}, ended_at = ${now}, failure = ${isBreakerFailure(outcome) ? 1 : 0},
      error = coalesce(${opts.error ?? null}, error) WHERE id = ${a.id} AND ${OPEN_ATTEMPT}`;
    if (!n) return false;
    this.timers.clear("timeout", a.id);
    this.endContacts([this.contactEnd(c, a, outcome, atMs, opts.noRetry ?? false)]);
    if (a.lease_id) leases.push(a.lease_id);
    return true;
  }

  /** What an attempt's end means for its contact: its outcome, and when it is tried again (null: done). */
  private contactEnd(c: CampaignRow, a: AttemptRow, outcome: string, atMs: number, noRetry: boolean): ContactEnd {
    const live = c.state === "running" || c.state === "paused" || c.state === "draft";
    return [a.contact_id, outcome, live && !noRetry ? retryDueAt(outcome, a.attempt, this.settings(c).retry_config, atMs) : null];
  }

  /** Contacts whose attempt ended: done, or waiting with a retry timer; one statement per kind of end. */
  private endContacts(ends: ContactEnd[]): void {
    for (const [[status, outcome], ids] of groupBy(
      ends,
      (x) => [x[2] == null ? "done" : "waiting", x[1]] as const,
      (x) => x[0],
    ))
      this.db
        .run`UPDATE contacts SET status = ${status}, outcome = ${outcome} WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND status = 'active'`;
    for (const [contactId, , due] of ends) if (due != null) this.timers.set("retry", contactId, due);
    this.markDirty();
  }

  /**
   * After attempts ended (in their transaction): the breaker, completion, or the next dispatch. `kicked`: the caller
   * dispatches at once (a status batch), so the alarm is only its fallback.
   */
  private afterFinish(now: number, kicked: boolean): void {
    const c = this.need();
    if (c.state !== "running") return;
    if (this.checkBreaker(now) || this.checkCompletion(now)) this.summary.force();
    else if (kicked) this.timers.atMost("dispatch", 0, now + KICK_FALLBACK_MS);
    else this.pokeDispatch(now);
  }

  /**
   * The organization's lease API, one stub kept per object: calls on one stub reach the organization object in the
   * order they were made (a batch's release before the next round's acquire).
   */
  private leases(orgId: number): LeaseClient {
    if (this.orgLeases?.orgId !== orgId) this.orgLeases = { orgId, client: leaseClient(this.env, orgId) };
    return this.orgLeases.client;
  }

  /** `undial`: the calls never reached a carrier (they do not count towards the numbers' attempt cap). */
  private async releaseLeases(orgId: number, leaseIds: string[], undial = false): Promise<void> {
    try {
      await this.leases(orgId).releaseMany(leaseIds, undial);
    } catch (err) {
      // The leases expire by themselves; a failed release costs capacity for a while, never correctness.
      console.warn(JSON.stringify({ level: "warning", event: "lease_release_failed", lease_ids: leaseIds, error: String(err) }));
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
      const run = await runOfAttempt(this.env, c.campaign_id, a.contact_id, a.attempt);
      const now = clock.now();
      if (run && isFinalStatus(run.status)) {
        this.db.run`UPDATE attempts SET run_id = coalesce(run_id, ${run.id}) WHERE id = ${a.id}`;
        await this.finishAttempt({ ...a, run_id: run.id }, run.status, now, {});
        this.log.write("warning", "attempt_reconciled", `An interrupted call start was found finished (${run.status}) in its run record`, {
          contact_id: a.contact_id,
          attempt: a.attempt,
          run_id: run.id,
          outcome: run.status,
        });
      } else if (run && (run.provider_call_id || PROGRESS_ORDER[run.status] > PROGRESS_ORDER.initiated)) {
        // A call id or a status past `initiated` came from the carrier (a run is recorded `initiated` before it is asked).
        // The carrier has the call: keep waiting for its statuses (the timeout still applies).
        this.db.run`UPDATE attempts SET status = 'in_flight', run_id = ${run.id}, provider_call_id = ${run.provider_call_id}
          WHERE id = ${a.id} AND status = 'dialing'`;
        this.log.write("info", "attempt_reconciled", "An interrupted call start was found placed; waiting for its outcome", {
          contact_id: a.contact_id,
          attempt: a.attempt,
          run_id: run.id,
        });
      } else {
        await this.finishAttempt(a, "unknown", now, { noRetry: true, error: "Interrupted while starting the call" });
        this.log.write(
          "warning",
          "attempt_reconciled",
          "A call start was interrupted; it may have been placed, so the contact is not dialed again (outcome unknown)",
          {
            contact_id: a.contact_id,
            attempt: a.attempt,
            run_id: run?.id ?? null,
          },
        );
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
    this.window.restart();
    this.window.refresh(now);
    if (!this.checkBreaker(now)) this.checkCompletion(now);
    this.pokeDispatch(now);
  }

  /** Pending and waiting contacts are skipped (cancel, failure); open attempts run on and are recorded. */
  private skipRemaining(): number {
    const n = this.db.changes`UPDATE contacts SET status = 'skipped' WHERE status IN ('queued', 'waiting')`;
    this.timers.clear("retry");
    return n;
  }

  /** Leaving `running`: no window changes or dispatch rounds to wait for. */
  private clearRunningTimers(): void {
    this.timers.clear("window");
    this.timers.clear("dispatch");
    this.window.timerGone();
  }

  private pokeDispatch(now: number): void {
    this.timers.atMost("dispatch", 0, now);
  }

  /** Trips the breaker (running → paused) when the window's failure share reaches the threshold. */
  private checkBreaker(now: number): boolean {
    const c = this.need();
    const cfg = this.settings(c).circuit_breaker;
    if (c.state !== "running" || !cfg.enabled) return false;
    const from = breakerWindowStart(now, cfg, c.breaker_since);
    const w = this.db.one<{ n: number; f: number }>`SELECT count(*) AS n, coalesce(sum(failure), 0) AS f FROM attempts WHERE ended_at >= ${from}`!;
    if (!breakerTrips(cfg, w.n, w.f)) return false;
    transition(this.db, "breaker_trip", now);
    this.log.write(
      "warning",
      "circuit_breaker_tripped",
      `Circuit breaker tripped: ${w.f} of the last ${w.n} calls failed within ${cfg.window_seconds}s (threshold ${Math.round(cfg.failure_threshold * 100)}%); campaign paused`,
      {
        failures: w.f,
        finished: w.n,
        failure_threshold: cfg.failure_threshold,
        window_seconds: cfg.window_seconds,
      },
    );
    this.log.write("info", "campaign_paused", "Campaign paused by the circuit breaker; calls in progress finish", { reason: "circuit_breaker" });
    this.clearRunningTimers();
    return true;
  }

  /** running → completed the moment nothing is pending, in flight or awaiting retry. */
  private checkCompletion(now: number): boolean {
    const c = this.need();
    if (c.state !== "running" || !c.import_done) return false;
    // An append under way may still add contacts: completion waits for its commit, discard or expiry (engine/staged.ts).
    if (this.staged.live(now)) return false;
    if (this.db.one`SELECT 1 AS x FROM contacts WHERE status IN ('queued', 'waiting', 'active') LIMIT 1`) return false;
    if (this.db.one`SELECT 1 AS x FROM attempts WHERE ${OPEN_ATTEMPT} LIMIT 1`) return false;
    transition(this.db, "complete", now);
    const k = this.counts();
    this.log.write("info", "campaign_completed", `Campaign completed: ${k.completed} of ${k.total} contacts reached`, {
      total: k.total,
      completed: k.completed,
      failed: k.failed,
      executed_count: k.executed,
    });
    this.clearRunningTimers();
    this.summary.force();
    return true;
  }

  private noteBlocked(reason: "org_cap" | null, lease?: LeaseResult): void {
    const c = this.need();
    if ((c.blocked ?? null) === reason) return;
    this.db.run`UPDATE campaign SET blocked = ${reason}`;
    if (reason === "org_cap") {
      const what = lease && lease.cap >= 0 ? ` (${lease.inUse} of ${lease.cap} in use)` : "";
      this.log.write("warning", "org_cap_reached", `The organization's concurrent call limit is reached${what}; calls wait for a free slot`, {
        in_use: lease?.inUse ?? null,
        cap: lease?.cap ?? null,
      });
    }
  }

  private loadPace(): void {
    const since = clock.now() - PACE_WINDOW_MS;
    this.pace.load(this.db.all<{ dialed_at: number }>`SELECT dialed_at FROM attempts WHERE dialed_at > ${since}`.map((r) => r.dialed_at));
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Persistence of what is derived: the D1 summary row and the alarm.

  /**
   * After any change: write the summary when due (or at a transition) and point the alarm at the earliest timer.
   * `writeDue` false (the status path): a refresh that is merely due is left to the alarm, off the hot path.
   */
  private async settle(writeDue = true): Promise<void> {
    await this.summary.flush(writeDue);
    await this.timers.rearm();
    await this.events.publish(() => this.progress());
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Pushed progress (engine/events.ts): the Worker's events route hands the upgrade here.

  async fetch(request: Request): Promise<Response> {
    if (!this.campaign()) return new Response("Campaign not found", { status: 404 });
    return this.events.accept(request, await this.progress());
  }

  async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    this.events.onMessage(ws, message);
  }

  async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.events.onClose(ws, code, reason);
  }
}

// Refusals travel back as values (faults.ts); the stubs in stub.ts and view.ts rethrow them.
returnFaults(CampaignObject, FAULT_RETURNING_METHODS);
