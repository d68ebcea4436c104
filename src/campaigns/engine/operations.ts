// The campaign's lifecycle as its callers drive it: create (at once or with a background import), start, resume,
// pause, cancel, settings, a failed source, redial links, and wiping it all. Each change is one transaction, then the
// object settles (summary, alarm, watchers); a change the state table does not allow is a 409 refusal.
import { clock } from "../../lib/clock";
import { migrate } from "../../lib/do-sql";
import { EngineError, engineConflict } from "./refusals";
import type { CampaignMeta } from "./object-api";
import { completeSettings, mergeSettings, validateSettings, type SettingsPatch } from "./settings";
import { countFinished } from "./contacts";
import type { CampaignCore } from "./core";
import type { StateMoves } from "./moves";
import type { Reads } from "./reads";
import { MIGRATIONS } from "./schema";
import { allowed, transition } from "./state";
import type { CampaignSnapshot, ImportSpec } from "./types";
import { iso } from "../../lib/helpers";

export class Operations {
  constructor(
    private readonly core: CampaignCore,
    private readonly moves: StateMoves,
    private readonly reads: Reads,
  ) {}

  /** Creates the campaign in `draft`. Repeating it for the same campaign is harmless. */
  initialize(meta: CampaignMeta): CampaignSnapshot {
    const existing = this.core.campaign();
    if (existing) {
      if (existing.campaign_id !== meta.campaignId) throw engineConflict("This campaign object already belongs to another campaign");
      return this.reads.snapshot();
    }
    this.core.db.tx(() => this.create(meta, "draft"));
    return this.reads.snapshot();
  }

  /** Creates the campaign in `importing` and starts importing its file here, in the background (csv/background.ts). */
  async beginImport(meta: CampaignMeta, spec: ImportSpec): Promise<CampaignSnapshot> {
    if (this.core.campaign()) throw engineConflict("This campaign object already belongs to a campaign");
    this.core.db.tx(() => {
      this.create(meta, "importing");
      this.core.imports.begin(spec);
    });
    await this.core.settle();
    return this.reads.snapshot();
  }

  private create(meta: CampaignMeta, state: "draft" | "importing"): void {
    const settings = completeSettings(meta.settings as Record<string, unknown> | undefined);
    this.core.db
      .run`INSERT INTO campaign (id, campaign_id, org_id, name, workflow_id, telephony_configuration_id, source_id, parent_campaign_id, state, settings, created_at)
      VALUES (1, ${meta.campaignId}, ${meta.orgId}, ${meta.name}, ${meta.workflowId}, ${meta.telephonyConfigurationId}, ${meta.sourceId},
        ${meta.parentCampaignId ?? null}, ${state}, ${JSON.stringify(settings)}, ${iso(clock.now())})`;
    this.core.log.write(
      "info",
      "campaign_created",
      `Campaign '${meta.name}' created`,
      meta.parentCampaignId ? { parent_campaign_id: meta.parentCampaignId } : {},
    );
  }

  /** The source could not be read: draft or running → failed. */
  async failSource(message: string): Promise<CampaignSnapshot> {
    const { core } = this;
    core.need();
    core.db.tx(() => {
      transition(core.db, "source_failed", clock.now(), message);
      core.log.write("error", "source_sync_failed", `The contact source could not be read: ${message}`, { error: message });
      core.log.write("error", "campaign_failed", "Campaign failed", { reason: "source_sync_failed" });
      this.moves.skipRemaining();
    });
    return this.changed();
  }

  /** Wipes everything (used when create fails midway). The object is blank afterwards. */
  async discard(): Promise<{ discarded: true }> {
    await this.core.ctx.storage.deleteAlarm();
    await this.core.ctx.storage.deleteAll();
    this.core.forget();
    migrate(this.core.db, MIGRATIONS);
    return { discarded: true };
  }

  async start(): Promise<CampaignSnapshot> {
    const c = this.core.need();
    if (c.state === "paused") return this.resume();
    allowed(c.state, "start");
    if (!c.import_done) throw engineConflict("Cannot start a campaign whose contacts are still being imported");
    return this.enterRunning("start", "campaign_started", "Campaign started");
  }

  async resume(): Promise<CampaignSnapshot> {
    this.core.need();
    return this.enterRunning("resume", "campaign_resumed", "Campaign resumed");
  }

  private async enterRunning(trigger: "start" | "resume", event: string, message: string): Promise<CampaignSnapshot> {
    const { core } = this;
    const now = clock.now();
    core.db.tx(() => {
      transition(core.db, trigger, now);
      core.log.write("info", event, message, {});
      this.moves.onRunning(now);
    });
    return this.changed();
  }

  async pause(): Promise<CampaignSnapshot> {
    return this.leaveRunning("pause", () => {
      this.core.log.write("info", "campaign_paused", "Campaign paused; calls in progress finish", { in_progress: this.core.openAttempts() });
    });
  }

  async cancel(): Promise<CampaignSnapshot> {
    return this.leaveRunning("cancel", () => {
      const skipped = this.moves.skipRemaining();
      this.core.log.write("info", "campaign_cancelled", "Campaign cancelled; pending contacts skipped, calls in progress finish", {
        skipped,
        in_progress: this.core.openAttempts(),
      });
    });
  }

  /** Pause or cancel: the move, what it does to the contacts and its log line (`record`), and no more dialing timers, in one transaction. */
  private async leaveRunning(trigger: "pause" | "cancel", record: () => void): Promise<CampaignSnapshot> {
    const { core } = this;
    core.need();
    core.db.tx(() => {
      transition(core.db, trigger, clock.now());
      record();
      this.moves.clearRunningTimers();
    });
    return this.changed();
  }

  /** PATCH: merges the change over the current settings; it takes effect at once. 409 once finished, 422 when invalid. */
  async updateSettings(patch: SettingsPatch): Promise<CampaignSnapshot> {
    const { core } = this;
    const c = core.need();
    allowed(c.state, "update");
    const merged = mergeSettings(core.settings(c), patch);
    const check = validateSettings(merged);
    if (!check.ok) throw new EngineError(422, `${String(check.issues[0]?.path[0] ?? "settings")}: ${check.issues[0]?.message ?? "invalid"}`);
    const checked = check.settings;
    const name = patch.name !== undefined ? patch.name : c.name;
    if (typeof name !== "string" || name.length < 1 || name.length > 255) throw new EngineError(422, "name must be 1 to 255 characters");
    const changed = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
    const now = clock.now();
    core.db.tx(() => {
      core.db.run`UPDATE campaign SET settings = ${JSON.stringify(checked)}, name = ${name}, summary_dirty = 1`;
      core.window.settingsChanged();
      core.log.write("info", "settings_updated", `Settings updated: ${changed.join(", ") || "nothing"}`, { fields: changed });
      if (c.state === "running") {
        core.window.refresh(now);
        this.moves.checkBreaker(now);
        core.pokeDispatch(now);
      }
    });
    return this.changed();
  }

  /** A nudge (from the organization object when a slot frees): try dialing again now. */
  async wake(): Promise<void> {
    if (this.core.campaign()?.state !== "running") return;
    this.core.pokeDispatch(clock.now());
    await this.core.timers.rearm();
  }

  /** What a redial child needs from its parent; 409 unless the parent is completed or cancelled. */
  redialPlan(outcomes: string[]): { meta: Omit<CampaignMeta, "campaignId">; count: number } {
    const { core } = this;
    const c = core.need();
    allowed(c.state, "redial");
    return {
      meta: {
        orgId: c.org_id,
        name: c.name,
        workflowId: c.workflow_id,
        telephonyConfigurationId: c.telephony_configuration_id,
        sourceId: c.source_id,
        settings: core.settings(c),
        parentCampaignId: c.campaign_id,
      },
      count: countFinished(core.db, outcomes),
    };
  }

  /** Records the newest redial child. */
  async linkRedial(childId: number, count: number): Promise<void> {
    const { core } = this;
    core.need();
    core.db.tx(() => {
      core.db.run`UPDATE campaign SET redialed_campaign_id = ${childId}, summary_dirty = 1`;
      core.log.write("info", "campaign_redialed", `Redial campaign ${childId} created with ${count} contact${count === 1 ? "" : "s"}`, {
        redialed_campaign_id: childId,
        contacts: count,
      });
    });
    this.core.summary.force();
    await this.core.settle();
  }

  /** After a transition: the summary row is written now (listings must see it), then the campaign as it is. */
  private async changed(): Promise<CampaignSnapshot> {
    this.core.summary.force();
    await this.core.settle();
    return this.reads.snapshot();
  }
}
