// A call's recording as it happens: two channels (the callee left, the agent right) at the stream's rate, one stereo
// frame per 20 ms of the call's clock, handed out in parts of PART_BYTES for a multipart upload so a long call never
// sits in memory. Each sample is stored as one G.711 μ-law byte (2 bytes a stereo sample, half of 16-bit PCM): the
// carriers' own codec, so a telephone call's audio is stored exactly as it arrived, and the runs route decodes it to
// a 16-bit WAV as it serves it. The agent's frames are placed where they play (the pacer says when), so the two sides
// line up; a barge-in's dropped frames are taken out again.
import { g711Encode } from "../../lib/audio/g711";

/** R2's smallest part but the last. */
export const PART_BYTES = 5 * 1024 * 1024;
/** Stored bytes per stereo sample (a μ-law byte per channel). */
export const RECORDING_BYTES_PER_SAMPLE = 2;

export class Recorder {
  private readonly part: Uint8Array;
  private fill = 0;
  /** How much of the current part has been handed to `unsaved` (kept by the session for a restart). */
  private saved = 0;
  private readonly agent = new Map<number, Int16Array>();
  private left = new Uint8Array(0);
  private right = new Uint8Array(0);
  /** Bytes handed out so far, in whole parts and the last. */
  written = 0;

  constructor(
    readonly rate: number,
    private readonly partBytes = PART_BYTES,
  ) {
    this.part = new Uint8Array(partBytes);
  }

  /** The agent's frame that plays from `atMs`. */
  agentFrame(atMs: number, samples: Int16Array): void {
    this.agent.set(atMs, samples);
  }

  /** A barge-in: the agent's frames from `atMs` on are never heard. */
  dropAgentFrom(atMs: number): void {
    for (const at of this.agent.keys()) if (at >= atMs) this.agent.delete(at);
  }

  /**
   * The callee's frame that ended at `clockMs`: writes the stereo frame for [clockMs - 20, clockMs) and returns a
   * full part when this one filled it (the caller uploads it before the next frame).
   */
  tick(clockMs: number, callee: Int16Array): Uint8Array | null {
    const at = clockMs - 20;
    const agent = this.agent.get(at);
    this.agent.delete(at);
    const n = callee.length;
    if (this.left.length < n) {
      this.left = new Uint8Array(n);
      this.right = new Uint8Array(n);
    }
    const left = g711Encode("mulaw", callee, this.left.subarray(0, n));
    const right = this.right.subarray(0, n);
    if (agent && agent.length >= n) g711Encode("mulaw", agent.subarray(0, n), right);
    else {
      // No agent audio (or a short frame): μ-law silence where it has none.
      right.fill(0xff);
      if (agent) g711Encode("mulaw", agent, right.subarray(0, agent.length));
    }
    let out: Uint8Array | null = null;
    for (let i = 0; i < n; i++) {
      const p = this.part;
      p[this.fill] = left[i];
      p[this.fill + 1] = right[i];
      this.fill += 2;
      if (this.fill === this.partBytes) {
        out = this.part.slice();
        this.written += this.fill;
        this.fill = 0;
        this.saved = 0;
      }
    }
    return out;
  }

  /** Silence on both channels for `ms` the call went on unheard (its media was being reconnected); may fill a part. */
  skip(ms: number, frameMs = 20): Uint8Array[] {
    const parts: Uint8Array[] = [];
    const silent = new Int16Array((this.rate * frameMs) / 1000);
    for (let t = 0; t < ms; t += frameMs) {
      const part = this.tick(-1, silent);
      if (part) parts.push(part);
    }
    return parts;
  }

  /** The bytes of the current part not handed out by an earlier call (null: none). */
  unsaved(): Uint8Array | null {
    if (this.fill === this.saved) return null;
    const bytes = this.part.slice(this.saved, this.fill);
    this.saved = this.fill;
    return bytes;
  }

  /** A restarted session's recorder takes back the part it had begun (what `unsaved` gave out). */
  restore(bytes: Uint8Array): void {
    this.part.set(bytes.subarray(0, this.partBytes - this.fill), this.fill);
    this.fill += Math.min(bytes.length, this.partBytes - this.fill);
    this.saved = this.fill;
  }

  /** What is left after the last full part (null when nothing is). */
  finish(): Uint8Array | null {
    if (!this.fill) return null;
    const rest = this.part.slice(0, this.fill);
    this.written += this.fill;
    this.fill = 0;
    return rest;
  }
}
