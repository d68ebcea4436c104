// Where a call's recording goes: full parts straight to an R2 multipart upload, the part being filled kept in the
// session's own storage by the heartbeat (so a restarted session records on from where it was), and the rest
// completed when the call ends. Stored as stereo G.711 μ-law under a `.ulaw` key (src/lib/audio/recording-format.ts);
// the runs route serves it as a 16-bit WAV.
import { RECORDING_SUFFIX } from "../../lib/audio/recording-format";
import type { DoSql } from "../../lib/do-sql";
import { Recorder } from "./recorder";
import type { SessionStore } from "./store";

/** Said again beside the key's suffix for whoever lists the bucket; the key alone decides how it is read. */
const META = (rate: number) => ({ rate: String(rate), channels: "2", codec: "mulaw" });

export class CallRecording {
  constructor(
    private readonly bucket: R2Bucket,
    private readonly db: DoSql,
    private readonly store: SessionStore,
  ) {}

  key(): string {
    const { orgId, runId } = this.store.current;
    return `recordings/${orgId}/${runId}${RECORDING_SUFFIX}`;
  }

  /** Uploads one full part (R2 multipart: every part but the last is PART_BYTES); what was kept of it goes. */
  async storePart(part: Uint8Array, rate: number): Promise<void> {
    let uploadId = this.store.current.recUpload;
    if (!uploadId) {
      const upload = await this.bucket.createMultipartUpload(this.key(), { customMetadata: META(rate) });
      uploadId = upload.uploadId;
      this.store.set({ recUpload: uploadId });
    }
    const parts = [...this.store.current.recParts];
    parts.push(await this.bucket.resumeMultipartUpload(this.key(), uploadId).uploadPart(parts.length + 1, part));
    this.db.tx(() => {
      this.store.set({ recParts: parts });
      this.db.run`DELETE FROM recording`;
    });
  }

  /** Keeps what the recorder added to its current part since the last call (the heartbeat's). */
  checkpoint(recorder: Recorder): void {
    const bytes = recorder.unsaved();
    if (bytes) this.db.run`INSERT INTO recording (bytes) VALUES (${bytes.buffer as ArrayBuffer})`;
  }

  /** A restarted session's recorder gets back the part it had begun. */
  restore(recorder: Recorder): void {
    for (const { bytes } of this.db.all<{ bytes: ArrayBuffer }>`SELECT bytes FROM recording ORDER BY id`) recorder.restore(new Uint8Array(bytes));
  }

  /**
   * The recording a restarted session left behind, for a call that ends before its media came back: a recorder at
   * the stream's rate holding the part it had begun (null where the call was not recorded or never started).
   */
  leftover(): Recorder | null {
    const { rate, record } = this.store.current;
    if (!rate || record === false) return null;
    const recorder = new Recorder(rate);
    this.restore(recorder);
    return recorder;
  }

  /** Stores what is left and completes the upload; the recording's key and rate, or null when nothing was recorded. */
  async finish(recorder: Recorder): Promise<{ recordingKey: string; recordingRate: number } | null> {
    const rest = recorder.finish();
    const key = this.key();
    const uploadId = this.store.current.recUpload;
    if (uploadId) {
      const upload = this.bucket.resumeMultipartUpload(key, uploadId);
      const parts = [...this.store.current.recParts];
      if (rest) parts.push(await upload.uploadPart(parts.length + 1, rest));
      await upload.complete(parts);
    } else if (rest) {
      await this.bucket.put(key, rest, { customMetadata: META(recorder.rate) });
    } else return null;
    this.db.run`DELETE FROM recording`;
    return { recordingKey: key, recordingRate: recorder.rate };
  }
}
