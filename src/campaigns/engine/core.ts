// What every part of the campaign engine shares: the object's storage and its parts (the log, the timers behind one
// alarm, the calling window, the D1 summary, pushed progress, the background import, staged appends, the pace, the
// recipients' hours), the campaign row and its settings, and settling after a change.
import { clock } from "../../lib/clock";
import { DoSql } from "../../lib/do-sql";
import { campaignNotFound } from "./refusals";
import { completeSettings, type CampaignSettings } from "./settings";
import { openAttempts } from "./attempts";
import { campaignRow, type CampaignRow } from "./campaign-row";
import { readCounts } from "./counts";
import { CampaignEvents } from "./events";
import { CampaignLog } from "./logs";
import { PACE_WINDOW_MS, PaceWindow } from "./pacing";
import { RecipientHours } from "./recipient-hours";
import { StagedContacts } from "./staged";
import { SummaryMirror } from "./summary";
import { Timers } from "./timers";
import type { CampaignCounts, CampaignProgress, ImportFailure, ImportSpec } from "./types";
import { CallingWindow } from "./window";

/** What the background import of the campaign's file works with (lent by the core). */
export type ImportParts = {
  db: DoSql;
  storage: DurableObjectStorage;
  env: Env;
  log: CampaignLog;
  timers: Timers;
  /** The campaign changed state: the D1 summary is to be written at once. */
  changed(): void;
};

/** The background import of the campaign's file (csv/background.ts) as the engine drives it. */
export interface FileImport {
  /** Records the job and asks for its first slice at once (inside the caller's transaction). */
  begin(spec: ImportSpec): void;
  /** The `import` timer: one slice, then the next is set (or the import ends). */
  run(): Promise<void>;
  /** Why the import failed, when it did. */
  failure(): ImportFailure | null;
  /** The rows an import with `on_invalid: "skip"` left out: how many, and as CSV (null: none). */
  refusedSummary(): { rows: number; truncated: boolean } | null;
  refusedReport(): { rows: number; csv: string; truncated: boolean } | null;
}

export class CampaignCore {
  readonly db: DoSql;
  readonly log: CampaignLog;
  readonly timers: Timers;
  readonly window: CallingWindow;
  readonly summary: SummaryMirror;
  readonly events: CampaignEvents;
  readonly imports: FileImport;
  readonly staged: StagedContacts;
  readonly pace = new PaceWindow();
  readonly hours: RecipientHours;
  private settingsCache: { json: string; value: CampaignSettings } | null = null;

  constructor(
    readonly ctx: DurableObjectState,
    readonly env: Env,
    /** The progress watchers are sent (reads.ts), computed only when someone watches. */
    private readonly progress: () => Promise<CampaignProgress>,
    /** The file import (csv/, above the engine: the object hands it in). */
    fileImport: (parts: ImportParts) => FileImport,
  ) {
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
    this.imports = fileImport({
      db: this.db,
      storage: ctx.storage,
      env,
      log: this.log,
      timers: this.timers,
      changed: () => this.summary.force(),
    });
    this.staged = new StagedContacts(this.db, this.timers, this.log);
  }

  campaign(): CampaignRow | null {
    return campaignRow(this.db);
  }

  /** The campaign row; a 404 refusal before the campaign is created. */
  need(): CampaignRow {
    const c = this.campaign();
    if (!c) throw campaignNotFound();
    return c;
  }

  /** The campaign's settings, parsed once per change. */
  settings(c: CampaignRow): CampaignSettings {
    if (this.settingsCache?.json !== c.settings) this.settingsCache = { json: c.settings, value: completeSettings(JSON.parse(c.settings)) };
    return this.settingsCache.value;
  }

  markDirty(): void {
    this.db.run`UPDATE campaign SET summary_dirty = 1 WHERE summary_dirty = 0`;
  }

  openAttempts(): number {
    return openAttempts(this.db);
  }

  /** Contact and attempt counts (kept by triggers: one row read). */
  counts(): CampaignCounts {
    return readCounts(this.db);
  }

  /** Dispatch runs at the next alarm, due now (or sooner if it already is). */
  pokeDispatch(now: number): void {
    this.timers.atMost("dispatch", 0, now);
  }

  /** The pace window rebuilt from the attempts of the last second (a new instance). */
  loadPace(): void {
    const since = clock.now() - PACE_WINDOW_MS;
    this.pace.load(this.db.all<{ dialed_at: number }>`SELECT dialed_at FROM attempts WHERE dialed_at > ${since}`.map((r) => r.dialed_at));
  }

  /** Storage was wiped: nothing kept in memory about it may stay. */
  forget(): void {
    this.timers.unarmed();
    this.settingsCache = null;
    this.window.forget();
    this.summary.timerGone();
    this.pace.load([]);
  }

  /**
   * After any change: write the summary when due (or at a transition), point the alarm at the earliest timer, tell
   * the watchers. `writeDue` false (the status path): a refresh that is merely due is left to the alarm.
   */
  async settle(writeDue = true): Promise<void> {
    await this.summary.flush(writeDue);
    await this.timers.rearm();
    await this.events.publish(this.progress);
  }
}
