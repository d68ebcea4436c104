// A campaign's contacts imported by its own object from the uploaded file (create with `import: "background"`), in
// slices driven by the object's alarm (an `import` timer): each slice reads the file from the last checkpoint,
// stores contacts in chunks and checkpoints after each, then yields, so reads see rows counting up and no single
// invocation runs long. A slice that dies is taken over by the next alarm: contacts stored after the checkpoint are
// removed and read again. The end is `draft` as a synchronous create leaves it; or `failed` with no contacts, the
// reason, and the rows' problems located exactly as a synchronous create's 422 reports them. With `on_invalid: "skip"`
// the rows with problems are left out and kept (refused-store.ts) as a CSV with the reason per row.
import { eq } from "drizzle-orm";
import { campaigns } from "../../db/schema";
import { clock } from "../../lib/clock";
import { getDb } from "../../lib/db";
import type { ValidationItem } from "../../lib/errors";
import { readCounts } from "../engine/counts";
import { insertContacts } from "../engine/contacts";
import type { CampaignRow } from "../engine/campaign-row";
import { transition } from "../engine/state";
import type { FileImport, ImportParts } from "../engine/core";
import type { ImportFailure, ImportItem, ImportSpec } from "../engine/types";
import { packContacts } from "../engine/packed";
import { CsvImport, type ImportCheckpoint, type ImportOutcome } from "./import";
import type { RefusedReport } from "./refused";
import { NO_REFUSED, type RefusedTally, StoredRefusedRows, storedRefusedReport } from "./refused-store";
import { dropRefusedFrom } from "../engine/refused-rows";
import { rulesOf } from "./rules";
import { Utf8Chunks, utf8Length } from "./utf8";
import { log as logLine } from "../../lib/log";

type Job = {
  spec: ImportSpec;
  checkpoint: ImportCheckpoint | null;
  /** With `on_invalid: "skip"`: the rows left out so far (saved with each checkpoint), and the file's columns once done. */
  refused?: (RefusedTally & { columns?: string[] }) | null;
  status: "importing" | "completed" | "failed" | "stopped";
  failure: ImportFailure | null;
  /** Slices in a row that threw (retried with backoff, then the import fails). */
  fails: number;
};

const JOB = "background_import";

/** How much one slice does; tests make slices small to watch them. */
export const importSlices = {
  /** Rows read per slice at most, and wall time (whichever comes first): reads of the campaign wait for a slice to
   *  end, so a slice stays around half a second. */
  rows: 50_000,
  ms: 1_000,
  /** Contacts stored per transaction (and checkpoint). */
  chunkRows: 5_000,
  /** Characters parsed at a time, so a chunk holds at most about chunkRows plus one piece of rows. */
  pieceChars: 256 * 1024,
  /** A slice that threw is retried this many times (after 1, 2, 4, ... s), then the import fails. */
  retries: 5,
  /** When a slice starts, the next one is set this far ahead: it runs only if this one dies. */
  watchdogMs: 60_000,
};

class Stopped extends Error {}
/** The file cannot be read as it was: not worth retrying. */
class FileGone extends Error {}

export class BackgroundImport implements FileImport {
  constructor(private readonly d: ImportParts) {}

  private job(): Job | undefined {
    return this.d.storage.kv.get<Job>(JOB);
  }

  private save(job: Job): void {
    this.d.storage.kv.put(JOB, job);
  }

  private state(): CampaignRow["state"] | null {
    return this.d.db.value<CampaignRow["state"]>`SELECT state FROM campaign WHERE id = 1`;
  }

  /** Records the job and asks for its first slice at once (inside the caller's transaction). */
  begin(spec: ImportSpec): void {
    this.save({ spec, checkpoint: null, status: "importing", failure: null, fails: 0 });
    this.d.timers.set("import", 0, clock.now());
  }

  /** Why the import failed, when it did. */
  failure(): ImportFailure | null {
    return this.job()?.failure ?? null;
  }

  /** The rows a finished import with `on_invalid: "skip"` left out (null: none, or not such an import). */
  refusedSummary(): { rows: number; truncated: boolean } | null {
    const r = this.job()?.refused;
    return r?.columns && r.count ? { rows: r.count, truncated: r.truncated } : null;
  }

  /** Those rows as CSV with the reason of each (GET /campaign/{id}/refused.csv). */
  refusedReport(): RefusedReport | null {
    const r = this.job()?.refused;
    return r?.columns && r.count ? storedRefusedReport(this.d.db, r.columns, r) : null;
  }

  /** The `import` timer: one slice, then the next is set (or the import ends). */
  async run(): Promise<void> {
    const job = this.job();
    if (job?.status !== "importing") return;
    if (this.state() !== "importing") return this.stop(); // cancelled meanwhile
    this.d.timers.set("import", 0, clock.now() + importSlices.watchdogMs);
    let outcome: ImportOutcome | null;
    try {
      outcome = await this.slice(job);
    } catch (err) {
      if (err instanceof Stopped) return this.stop();
      const fails = job.fails + 1;
      const gone = err instanceof FileGone;
      if (gone || fails > importSlices.retries) {
        const why = gone ? err.message : `The import stopped after ${fails} attempts: ${String(err)}`;
        return await this.fail({ message: why, errors: [] });
      }
      logLine("warning", "background_import_retry", { fails, error: String(err) });
      this.save({ ...(this.job() ?? job), fails });
      this.d.timers.set("import", 0, clock.now() + 1000 * 2 ** (fails - 1));
      return;
    }
    if (!outcome) {
      this.d.timers.set("import", 0, clock.now()); // the next slice at once
      return;
    }
    if (outcome.ok) this.complete();
    else await this.fail(failureOf(outcome.items, outcome.total));
  }

  /** Reads on from the checkpoint; the outcome once the file is done, null when the slice's budget ran out. */
  private async slice(job: Job): Promise<ImportOutcome | null> {
    const { db } = this.d;
    const from = job.checkpoint;
    // Contacts a lost slice stored after its last checkpoint are read again: remove them first.
    if (readCounts(db).total > (from?.inserted ?? 0)) db.run`DELETE FROM contacts WHERE row >= ${from?.row ?? 0}`;
    // And the rows it left out (`on_invalid: "skip"`), going on from the checkpoint's tally.
    const refused = job.spec.skipInvalid ? new StoredRefusedRows(db, (from && job.refused) || NO_REFUSED) : undefined;
    if (refused) dropRefusedFrom(db, from?.row ?? 0);
    const imp = new CsvImport(
      {
        ...rulesOf(job.spec),
        refusedNotes: refused,
        chunkRows: Infinity,
        chunkChars: Infinity,
        boundInputs: true,
        sink: {
          importContacts: async (chunk) => {
            if (this.state() !== "importing") throw new Stopped();
            return db.tx(() => insertContacts(db, packContacts(chunk)));
          },
        },
      },
      from ?? undefined,
    );
    const start = from?.offset ?? 0;
    // The same file as when the campaign was created (a still valid upload URL could replace it).
    const file = await this.d.env.UPLOADS.get(job.spec.key, { range: { offset: start }, onlyIf: job.spec.etag ? { etagMatches: job.spec.etag } : undefined });
    if (!file) throw new FileGone("The uploaded file is gone (it was deleted, or its key is wrong)");
    if (!("body" in file)) throw new FileGone("The uploaded file was replaced after the campaign was created");
    const utf8 = new Utf8Chunks(start);
    const reader = file.body.getReader();
    const began = Date.now();
    const firstRow = imp.rowsRead;
    const store = async (at: number) => {
      await imp.flush();
      await imp.settle();
      if (this.state() !== "importing") throw new Stopped();
      this.save({ ...(this.job() ?? job), checkpoint: imp.checkpoint(at), refused: refused?.tally() ?? null, fails: 0 });
      // Listings read the D1 row: it follows the count (at most every few seconds).
      db.run`UPDATE campaign SET summary_dirty = 1 WHERE summary_dirty = 0`;
    };
    try {
      for (;;) {
        const { done, value } = await reader.read();
        const decoded = utf8.push(done ? new Uint8Array(0) : value, done);
        const invalid = "invalidAt" in decoded;
        const text = decoded.text;
        let at = utf8.lastTextStart;
        // Pieces keep a chunk to about chunkRows whatever size the stream hands over.
        for (let i = 0; i === 0 || i < text.length; i += importSlices.pieceChars) {
          const piece = text.slice(i, i + importSlices.pieceChars);
          await imp.feed(piece, done && !invalid && i + importSlices.pieceChars >= text.length);
          at += utf8Length(piece);
          if (imp.stopped) break;
          if (imp.rowsRead - firstRow >= importSlices.rows || Date.now() - began >= importSlices.ms) {
            // Out of budget: what follows `at` (this chunk's rest included) is read by the next slice.
            await store(at);
            return null;
          }
          if (imp.batchRows >= importSlices.chunkRows) await store(at);
        }
        if (invalid) imp.failEncoding(decoded.invalidAt);
        if (imp.stopped || done || invalid) break;
      }
    } finally {
      await reader.cancel().catch(() => {});
    }
    const outcome = await imp.finish();
    if (refused) this.save({ ...(this.job() ?? job), refused: { ...refused.tally(), ...(outcome.ok ? { columns: outcome.columns } : {}) } });
    return outcome;
  }

  private complete(): void {
    const { db, log } = this.d;
    const now = clock.now();
    if (this.state() !== "importing") {
      this.stop();
      return;
    }
    this.d.timers.clear("import");
    db.tx(() => {
      const total = readCounts(db).total;
      const left = this.refusedSummary()?.rows ?? 0;
      db.run`UPDATE campaign SET import_done = 1, source_synced_at = ${new Date(now).toISOString()}, summary_dirty = 1`;
      transition(db, "imported", now);
      const out = left ? `; ${left} row${left === 1 ? "" : "s"} with problems left out (GET /campaign/{id}/refused.csv)` : "";
      log.write("info", "source_sync_completed", `${total} contact${total === 1 ? "" : "s"} imported${out}`, left ? { total, refused_rows: left } : { total });
      this.save({ ...this.job()!, status: "completed", fails: 0 });
    });
    this.d.changed();
  }

  /** Fails the campaign with no contacts left; the reason is logged and kept for reads. */
  private async fail(failure: ImportFailure): Promise<void> {
    const { db, log } = this.d;
    if (this.state() !== "importing") return this.stop();
    this.d.timers.clear("import");
    db.tx(() => {
      db.run`DELETE FROM contacts`;
      dropRefusedFrom(db, 0);
      transition(db, "source_failed", clock.now(), failure.message);
      log.write("error", "source_sync_failed", `The contacts could not be imported: ${failure.message}`, {
        error: failure.message,
        problems: failure.errors.length ? ((failure.errors[0].ctx?.total_errors as number) ?? failure.errors.length) : 0,
      });
      log.write("error", "campaign_failed", "Campaign failed", { reason: "source_sync_failed" });
      this.save({ ...this.job()!, status: "failed", failure, refused: null });
    });
    this.d.changed();
    // Listings read the D1 row: the reason goes there too (the state follows with the summary).
    const campaignId = db.value<number>`SELECT campaign_id FROM campaign WHERE id = 1`;
    try {
      await getDb(this.d.env).update(campaigns).set({ importError: failure }).where(eq(campaigns.id, campaignId!));
    } catch (err) {
      logLine("warning", "import_error_summary_failed", { campaign_id: campaignId, error: String(err) });
    }
  }

  /** The campaign left `importing` (cancelled): the job ends; contacts stored before stay, skipped by the cancel. */
  private stop(): void {
    this.d.timers.clear("import");
    const job = this.job();
    if (job) this.save({ ...job, status: "stopped" });
  }
}

/** One sentence for a file that did not pass, naming its first problem. */
function failureOf(items: ValidationItem[], total: number): ImportFailure {
  const errors = items as ImportItem[];
  const first = errors[0];
  const [, , row, column] = first?.loc ?? [];
  const where = first ? `; the first is at row ${row}${column === undefined ? "" : `, column ${column}`}: ${first.msg}` : "";
  return { message: `The file has ${total} problem${total === 1 ? "" : "s"}, so nothing was imported${where}`, errors };
}
