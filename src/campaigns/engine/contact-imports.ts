// Contacts coming in: the chunks of a create's file (then finishImport), and appends to an existing campaign
// (POST /campaign/{id}/contacts, ../append.ts): beginAppend, stageAppend (chunks), then commitAppend or discardAppend.
// Staged rows are invisible until the commit adds them all at once (staged.ts).
import { clock } from "../../lib/clock";
import { EngineError, engineConflict } from "./refusals";
import type { CampaignState } from "./object-api";
import type { PackedContacts } from "./packed";
import type { CampaignRow } from "./campaign-row";
import { insertContacts, type Duplicate } from "./contacts";
import type { CampaignCore } from "./core";
import type { StateMoves } from "./moves";
import { appendLimits, type CommitResult, type StageResult } from "./staged";
import { allowed } from "./state";

export class ContactImports {
  constructor(
    private readonly core: CampaignCore,
    private readonly moves: StateMoves,
  ) {}

  /** Adds one packed chunk of validated contacts; a phone number already in the campaign is reported, not inserted. */
  importPacked(parts: PackedContacts): { inserted: number; duplicates: Duplicate[] } {
    const c = this.core.need();
    if (c.import_done || c.state !== "draft") throw engineConflict("Contacts can only be added while the campaign is being created");
    return this.core.db.tx(() => insertContacts(this.core.db, parts));
  }

  /** Marks the contact list complete; the campaign can start from now on. */
  finishImport(): { total: number } {
    const { core } = this;
    const c = core.need();
    const total = core.db.value<number>`SELECT count(*) FROM contacts` ?? 0;
    if (!c.import_done) {
      core.db.tx(() => {
        core.db.run`UPDATE campaign SET import_done = 1, source_synced_at = ${new Date(clock.now()).toISOString()}, summary_dirty = 1`;
        core.log.write("info", "source_sync_completed", `${total} contact${total === 1 ? "" : "s"} imported`, { total });
      });
    }
    return { total };
  }

  /** Opens an append for `orgId`'s campaign: 404 for another organization, 409 unless it takes contacts now. */
  async beginAppend(orgId: number): Promise<{ token: string }> {
    const { core } = this;
    const c = core.need();
    if (c.org_id !== orgId) throw new EngineError(404, "Campaign not found");
    this.appendable(c);
    const token = core.db.tx(() => core.staged.begin(clock.now(), Math.max(0, appendLimits.maxRows - core.counts().total)));
    await core.timers.rearm();
    return { token };
  }

  /** Stages one packed chunk of the appended file (row order); duplicates within the file are reported. */
  stageAppend(token: string, parts: PackedContacts): StageResult {
    this.core.need();
    return this.core.db.tx(() => this.core.staged.stage(token, parts, clock.now()));
  }

  /** Adds every staged contact in one transaction and drops the batch; a running campaign dials them. */
  async commitAppend(token: string, sourceUrl: string): Promise<CommitResult & { total_rows: number; state: CampaignState }> {
    const { core } = this;
    const c = core.need();
    const now = clock.now();
    try {
      // The campaign may have finished (or been cancelled) while the file was read: nothing is added then.
      this.appendable(c);
    } catch (err) {
      await this.discardAppend(token);
      throw err;
    }
    const r = core.db.tx(() => {
      const res = core.staged.commit(token);
      const total = core.counts().total;
      const skipped = res.skipped_existing ? `; ${res.skipped_existing} already in the campaign skipped` : "";
      core.log.write("info", "contacts_appended", `${res.added} contact${res.added === 1 ? "" : "s"} added${skipped}`, {
        added: res.added,
        skipped_existing: res.skipped_existing,
        total,
        source_url: sourceUrl,
      });
      core.markDirty();
      // Nothing new (every number was known): the completion this append held back may be due now.
      if (c.state === "running" && !this.moves.checkCompletion(now)) core.pokeDispatch(now);
      return { ...res, total_rows: total, state: c.state };
    });
    core.summary.force();
    await core.settle();
    return r;
  }

  /** Drops the append `token` opened (its file did not pass, or its request failed). */
  async discardAppend(token: string): Promise<{ discarded: boolean }> {
    const { core } = this;
    const discarded = core.db.tx(() => {
      const gone = core.staged.discard(token);
      if (gone && this.moves.checkCompletion(clock.now())) core.summary.force();
      return gone;
    });
    await core.settle();
    return { discarded };
  }

  /** 409 unless the campaign takes contacts now: draft (its first import done), running or paused. */
  private appendable(c: CampaignRow): void {
    allowed(c.state, "append");
    if (!c.import_done) throw engineConflict("Cannot add contacts to a campaign whose contacts are still being imported");
  }
}
