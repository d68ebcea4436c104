// One Durable Object per campaign (addressed by its id: calls/campaign/campaign-port.ts): the source of truth for the
// campaign's state, settings, contacts, attempts, timers and logs. This class is its RPC facade; the engine's modules
// (engine/) do the work. A method that can be refused answers a Result (errors.ts): the refusal is a typed value the
// Worker's callers turn into the HTTP error (unwrap), not an exception thrown across RPC.
//
// The engine's correctness rules: an attempt is stored as `dialing` before the carrier is asked (engine/dial.ts), and
// one found `dialing` after a restart is reconciled, never blindly re-dialed (engine/reconcile.ts); call statuses are
// idempotent and a final one is never overwritten (engine/call-statuses.ts); one alarm serves a table of timers
// (engine/alarm.ts); the D1 summary row follows at transitions and every few seconds while running (engine/summary.ts).
import { DurableObject } from "cloudflare:workers";
import type { CampaignCallRef, CampaignCallStatus, RunOutcome } from "../calls/campaign/campaign-calls";
import type { CampaignPort } from "../calls/campaign/campaign-port";
import { migrateOnStart } from "../lib/do-sql";
import { BackgroundImport } from "./csv/background";
import { Alarm } from "./engine/alarm";
import { CallStatuses } from "./engine/call-statuses";
import { ContactImports } from "./engine/contact-imports";
import { scheduleCallback } from "./engine/callbacks";
import { recordAmdClass, recordDisposition, type ContactView } from "./engine/contact-runs";
import type { Duplicate } from "./engine/contacts";
import { CampaignCore } from "./engine/core";
import { Dial } from "./engine/dial";
import { eraseNumber, type EraseResult } from "./engine/erase";
import { Dispatch } from "./engine/dispatch";
import { AttemptEndings } from "./engine/endings";
import { OrgLeases } from "./engine/leases";
import { StateMoves } from "./engine/moves";
import { Operations } from "./engine/operations";
import { Reads } from "./engine/reads";
import { reconcile } from "./engine/reconcile";
import { MIGRATIONS } from "./engine/schema";
import type { CommitResult, StageResult } from "./engine/staged";
import type { CampaignCounts, CampaignProgress, CampaignSnapshot, ImportSpec, LogPage, SettingsPatch } from "./engine/types";
import { refusable, type Result } from "./errors";
import type { CampaignMeta, CampaignState, ContactInput } from "./engine/object-api";
import { packContacts, type PackedContacts } from "./engine/packed";
import { log } from "../lib/log";
import { clock } from "../lib/clock";

type Inserted = { inserted: number; duplicates: Duplicate[] };

export class CampaignObject extends DurableObject<Env> implements CampaignPort {
  private readonly core: CampaignCore;
  private readonly reads: Reads;
  private readonly ops: Operations;
  private readonly contactImports: ContactImports;
  private readonly dispatch: Dispatch;
  private readonly statuses: CallStatuses;
  private readonly alarms: Alarm;
  /** Settles when the constructor's migration and reconciliation are done (in-process simulations await it). */
  readonly ready: Promise<void>;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const core = new CampaignCore(
      ctx,
      env,
      async () => this.reads.progress(),
      (parts) => new BackgroundImport(parts),
    );
    const leases = new OrgLeases(env);
    const moves = new StateMoves(core);
    const endings = new AttemptEndings(core, moves, leases);
    this.core = core;
    this.reads = new Reads(core);
    this.ops = new Operations(core, moves, this.reads);
    this.contactImports = new ContactImports(core, moves);
    this.dispatch = new Dispatch(core, moves, new Dial(core, moves, endings, leases), leases);
    this.statuses = new CallStatuses(core, endings, this.dispatch, leases);
    this.alarms = new Alarm(core, moves, endings, this.dispatch);
    this.ready = migrateOnStart(ctx, core.db, MIGRATIONS, async () => {
      core.loadPace();
      try {
        await reconcile(core, endings);
      } catch (err) {
        log("error", "campaign_reconcile_failed", { error: String(err) });
      }
    });
  }

  // Creation: initialize (or beginImport), importContacts (chunks), finishImport; failSource; discard.

  /** Creates the campaign in `draft`. Repeating it for the same campaign is harmless. */
  initialize(meta: CampaignMeta): Promise<Result<CampaignSnapshot>> {
    return refusable(() => this.ops.initialize(meta));
  }

  /** Creates the campaign in `importing` and imports its file here, in the background (csv/background.ts). */
  beginImport(meta: CampaignMeta, spec: ImportSpec): Promise<Result<CampaignSnapshot>> {
    return refusable(() => this.ops.beginImport(meta, spec));
  }

  /** Adds one chunk of validated contacts; a phone number already in the campaign is reported, not inserted. */
  importContacts(chunk: ContactInput[]): Promise<Result<Inserted>> {
    return refusable(() => this.contactImports.importPacked(packContacts(chunk)));
  }

  /** `importContacts` for a chunk the caller packed (packContacts): what the CSV import sends. */
  importPacked(parts: PackedContacts): Promise<Result<Inserted>> {
    return refusable(() => this.contactImports.importPacked(parts));
  }

  /** Marks the contact list complete; the campaign can start from now on. */
  finishImport(): Promise<Result<{ total: number }>> {
    return refusable(() => this.contactImports.finishImport());
  }

  /** The source could not be read: draft or running → failed. */
  failSource(message: string): Promise<Result<CampaignSnapshot>> {
    return refusable(() => this.ops.failSource(message));
  }

  /** Wipes everything (used when create fails midway). The object is blank afterwards. */
  discard(): Promise<{ discarded: true }> {
    return this.ops.discard();
  }

  // Appending contacts (../append.ts): beginAppend, stageAppend (chunks), commitAppend or discardAppend.

  /** Opens an append for `orgId`'s campaign: 404 for another organization, 409 unless it takes contacts now. */
  beginAppend(orgId: number): Promise<Result<{ token: string }>> {
    return refusable(() => this.contactImports.beginAppend(orgId));
  }

  /** Stages one packed chunk of the appended file (row order); duplicates within the file are reported. */
  stageAppend(token: string, parts: PackedContacts): Promise<Result<StageResult>> {
    return refusable(() => this.contactImports.stageAppend(token, parts));
  }

  /** Adds every staged contact in one transaction and drops the batch; a running campaign dials them. */
  commitAppend(token: string, sourceUrl: string): Promise<Result<CommitResult & { total_rows: number; state: CampaignState }>> {
    return refusable(() => this.contactImports.commitAppend(token, sourceUrl));
  }

  /** Drops the append `token` opened (its file did not pass, or its request failed). */
  discardAppend(token: string): Promise<{ discarded: boolean }> {
    return this.contactImports.discardAppend(token);
  }

  // Reading.

  snapshot(): Promise<Result<CampaignSnapshot>> {
    return refusable(() => this.reads.snapshot());
  }

  progress(): Promise<Result<CampaignProgress>> {
    return refusable(() => this.reads.progress());
  }

  /** The rows a background import with `on_invalid: "skip"` left out, as CSV with the reason of each (null: none). */
  refusedRows(): Promise<Result<{ rows: number; csv: string; truncated: boolean } | null>> {
    return refusable(() => this.core.imports.refusedReport());
  }

  /**
   * progress() for the Worker's route without a D1 lookup first: null (the route's 404, as for an unknown campaign)
   * unless the campaign is `orgId`'s and no longer being created.
   */
  async progressFor(orgId: number): Promise<CampaignProgress | null> {
    return this.reads.progressFor(orgId);
  }

  /** Contacts in row order with their attempts' runs and dispositions, a page after contact id `after`. */
  contacts(after: number, limit: number, withContext = false): Promise<Result<{ items: ContactView[]; next: number | null }>> {
    return refusable(() => this.reads.contacts(after, limit, withContext));
  }

  /** Logs newest first, `limit` per page, continuing below log id `before`. */
  logs(limit = 50, before: number | null = null): Promise<Result<LogPage>> {
    return refusable(() => this.reads.logs(limit, before));
  }

  /** Contact and attempt counts (kept by triggers: one row read). */
  counts(): CampaignCounts {
    return this.core.counts();
  }

  // Operations.

  start(): Promise<Result<CampaignSnapshot>> {
    return refusable(() => this.ops.start());
  }

  resume(): Promise<Result<CampaignSnapshot>> {
    return refusable(() => this.ops.resume());
  }

  pause(): Promise<Result<CampaignSnapshot>> {
    return refusable(() => this.ops.pause());
  }

  cancel(): Promise<Result<CampaignSnapshot>> {
    return refusable(() => this.ops.cancel());
  }

  /** PATCH: merges the change over the current settings; it takes effect at once. 409 once finished, 422 if invalid. */
  updateSettings(patch: SettingsPatch): Promise<Result<CampaignSnapshot>> {
    return refusable(() => this.ops.updateSettings(patch));
  }

  /** A nudge (from the organization object when a slot frees): try dialing again now. */
  wake(): Promise<void> {
    return this.ops.wake();
  }

  // The calls module (through calls/campaign/campaign-port.ts): statuses, call ids, dispositions.

  /** A call status from the calls module (onCallStatuses with one). */
  async onCallStatus(s: CampaignCallStatus): Promise<{ applied: boolean }> {
    return (await this.onCallStatuses([s]))[0];
  }

  /** Call statuses, several calls' callbacks in one RPC, in the order they arrived (engine/call-statuses.ts). */
  onCallStatuses(batch: CampaignCallStatus[]): Promise<{ applied: boolean }[]> {
    return this.statuses.apply(batch);
  }

  /** The carrier's call ids of these calls, by run id: until a call's answer, only its campaign has it. */
  async callIdsOf(calls: CampaignCallRef[]): Promise<Record<number, string>> {
    return this.statuses.callIdsOf(calls);
  }

  /** A call's disposition, from its session or its analysis; `call_back_later` with a time schedules the callback (idempotent). */
  async onRunOutcome(o: RunOutcome): Promise<{ applied: boolean }> {
    if (!this.core.campaign()) return { applied: false };
    const classed = recordAmdClass(this.core.db, o);
    const recorded = recordDisposition(this.core.db, this.core.log, o) || classed;
    const called = this.core.db.tx(() => scheduleCallback(this.core, o, clock.now()));
    if (called) await this.core.settle(false);
    return { applied: recorded || called };
  }

  // Erasure (privacy/erasure.ts).

  /**
   * Removes `number`'s contact, attempts, retry timer and staged row, and the number from the log; refused (`live`,
   * nothing removed) while a call to it is dialing or in flight. Idempotent: a number it does not hold erases nothing.
   */
  async eraseNumber(number: string): Promise<EraseResult> {
    const r = eraseNumber(this.core, number);
    if (r.erased) await this.core.settle();
    return r;
  }

  // Redial (the child is created by ../redial.ts through these).

  /** What a redial child needs from its parent; 409 unless the parent is completed or cancelled. */
  redialPlan(outcomes: string[]): Promise<Result<{ meta: Omit<CampaignMeta, "campaignId">; count: number }>> {
    return refusable(() => this.ops.redialPlan(outcomes));
  }

  /** One page of the contacts whose final outcome is in `outcomes`, in contact order after `afterId`. */
  redialContacts(outcomes: string[], afterId: number, limit: number): Promise<Result<{ contacts: ContactInput[]; next: number | null }>> {
    return refusable(() => this.reads.redialContacts(outcomes, afterId, limit));
  }

  /** Records the newest redial child. */
  linkRedial(childId: number, count: number): Promise<Result<void>> {
    return refusable(() => this.ops.linkRedial(childId, count));
  }

  // The runtime's entry points: the alarm (engine/alarm.ts) and pushed progress (engine/events.ts).

  async alarm(): Promise<void> {
    await this.alarms.run();
  }

  async fetch(request: Request): Promise<Response> {
    if (!this.core.campaign()) return new Response("Campaign not found", { status: 404 });
    return this.core.events.accept(request, this.reads.progress());
  }

  async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    this.core.events.onMessage(ws, message);
  }

  async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.core.events.onClose(ws, code, reason);
  }
}
