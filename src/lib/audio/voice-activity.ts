// Where each side of a two-channel call recording speaks, and the gaps between them (issue 42, latency from what the
// caller heard): voice activity per channel on 20 ms frames (an energy threshold over a tracked noise floor, a
// hangover that bridges the pauses between words, a minimum length that drops clicks), the edges refined to 5 ms
// within their frame; then, for each onset of the agent's voice, the preceding end of the caller's voice. Pure and
// incremental: a recording is fed as it streams, so a long call never sits in memory.
import { g711Decode } from "./g711";
import type { RecordingCodec } from "./recording-format";

export const VAD_FRAME_MS = 20;
/** Frames are judged as a whole; their first and last voiced 5 ms place an edge within them. */
export const VAD_BLOCK_MS = 5;
/**
 * Voice is at least this loud (dBFS, RMS over 5 ms): about rms 100 of 32768, well under the agent's energy gate (500),
 * so a word's soft end (a trailing "s") still counts as the caller's voice.
 */
export const VOICE_FLOOR_DBFS = -50;
/** ...and this far above the channel's noise floor (a noisy line raises the bar). */
export const NOISE_MARGIN_DB = 12;
/** How long voice may pause and still be the same stretch (the pauses between words and breaths). */
export const HANGOVER_MS = 300;
/** A stretch voiced for less than this is a click or a pop, not voice. */
export const MIN_VOICE_MS = 60;
/**
 * The noise floor is the quietest frame within a second either side of the one judged (so each frame is judged a
 * second late): speech pauses between words often enough to show it, a line's steady noise never does, and a call
 * that opens on a noisy line or on speech is judged as well as the rest of it.
 */
const FLOOR_REACH_FRAMES = 50;
/** Digital silence's energy, so a frame of zeros has a finite level. */
const SILENCE_DBFS = -100;

/** A stretch of voice on one channel, ms from the recording's start: from its first voiced to its last voiced 5 ms. */
export type VoiceSegment = { startMs: number; endMs: number };

/** An onset of the agent's voice after the caller spoke: the caller's voice ended at callerEndMs. */
export type Exchange = {
  callerEndMs: number;
  agentStartMs: number;
  /** agentStartMs - callerEndMs; negative when the agent began before the caller's voice ended (they overlapped). */
  gapMs: number;
};

const dbfs = (meanSquare: number) => (meanSquare > 0 ? 10 * Math.log10(meanSquare / (32768 * 32768)) : SILENCE_DBFS);

type Frame = { index: number; atMs: number; blocks: readonly number[]; db: number };

/** One channel's voice activity, fed frame by frame (each judged FLOOR_REACH_FRAMES later, or when it closes). */
export class ChannelVoice {
  readonly segments: VoiceSegment[] = [];
  /** The frames within FLOOR_REACH_FRAMES either side of the next one judged (those after it are waiting). */
  private readonly recent: Frame[] = [];
  private next = 0;
  private frames = 0;
  private open: { startMs: number; lastEndMs: number; voicedMs: number } | null = null;

  /** A frame of samples starting at `atMs`, as its equal blocks' mean squares. */
  frame(atMs: number, blockMeanSquares: readonly number[]): void {
    const db = dbfs(blockMeanSquares.reduce((a, b) => a + b, 0) / blockMeanSquares.length);
    this.recent.push({ index: this.frames++, atMs, blocks: blockMeanSquares, db });
    if (this.frames - this.next > FLOOR_REACH_FRAMES) this.judgeNext();
  }

  private judgeNext(): void {
    const index = this.next++;
    while (this.recent[0].index < index - FLOOR_REACH_FRAMES) this.recent.shift();
    const { atMs, blocks, db } = this.recent[index - this.recent[0].index];
    let floor = Number.POSITIVE_INFINITY;
    for (const f of this.recent) floor = Math.min(floor, f.db);
    const threshold = Math.max(VOICE_FLOOR_DBFS, floor + NOISE_MARGIN_DB);
    const blockMs = VAD_FRAME_MS / blocks.length;
    if (db >= threshold) {
      // The edges within the frame: its first and last block at the threshold (the frame's mean is, so one is).
      let first = 0;
      let last = blocks.length - 1;
      while (first < last && dbfs(blocks[first]) < threshold) first++;
      while (last > first && dbfs(blocks[last]) < threshold) last--;
      const startMs = atMs + first * blockMs;
      const endMs = atMs + (last + 1) * blockMs;
      if (this.open) {
        this.open.lastEndMs = endMs;
        this.open.voicedMs += VAD_FRAME_MS;
      } else this.open = { startMs, lastEndMs: endMs, voicedMs: VAD_FRAME_MS };
    } else if (this.open && atMs + VAD_FRAME_MS - this.open.lastEndMs >= HANGOVER_MS) this.end();
  }

  private end(): void {
    const o = this.open;
    this.open = null;
    if (o && o.voicedMs >= MIN_VOICE_MS) this.segments.push({ startMs: o.startMs, endMs: o.lastEndMs });
  }

  /** The channel ended: the frames still waiting are judged and the stretch under way ends. */
  close(): void {
    while (this.next < this.frames) this.judgeNext();
    this.end();
  }
}

/**
 * For each onset of the agent's voice, the preceding end of the caller's voice: the latest end among the caller's
 * stretches that began before the onset and ended after the agent's previous stretch ended (the caller spoke since
 * the agent last did). An onset the caller said nothing before (the greeting, a second sentence after a pause) has
 * no exchange.
 */
export function exchanges(caller: readonly VoiceSegment[], agent: readonly VoiceSegment[]): Exchange[] {
  const out: Exchange[] = [];
  let prevAgentEnd = Number.NEGATIVE_INFINITY;
  for (const a of agent) {
    let callerEnd: number | null = null;
    for (const c of caller) {
      if (c.startMs >= a.startMs) break;
      if (c.endMs > prevAgentEnd && (callerEnd === null || c.endMs > callerEnd)) callerEnd = c.endMs;
    }
    if (callerEnd !== null) out.push({ callerEndMs: callerEnd, agentStartMs: a.startMs, gapMs: a.startMs - callerEnd });
    prevAgentEnd = Math.max(prevAgentEnd, a.endMs);
  }
  return out;
}

/**
 * A stereo recording (the caller left, the agent right, as the session's recorder writes it) fed as its stored
 * bytes arrive, in any chunks: each channel's voice, and the exchanges between them once it is done.
 */
export class RecordingVoices {
  readonly caller = new ChannelVoice();
  readonly agent = new ChannelVoice();
  private readonly frameSamples: number;
  private readonly blockSamples: number;
  private readonly left: Int16Array;
  private readonly right: Int16Array;
  private filled = 0;
  private frames = 0;
  /** The bytes of a stereo sample split across two chunks. */
  private carry = new Uint8Array(0);

  constructor(
    readonly rate: number,
    private readonly codec: RecordingCodec = "mulaw",
  ) {
    this.frameSamples = (rate * VAD_FRAME_MS) / 1000;
    this.blockSamples = (rate * VAD_BLOCK_MS) / 1000;
    if (!Number.isInteger(this.frameSamples) || !Number.isInteger(this.blockSamples)) throw new RangeError(`unsupported rate ${rate}`);
    this.left = new Int16Array(this.frameSamples);
    this.right = new Int16Array(this.frameSamples);
  }

  /** Stored bytes: μ-law (a byte per channel per sample) or 16-bit little-endian PCM, channels interleaved. */
  push(chunk: Uint8Array): void {
    const width = this.codec === "mulaw" ? 2 : 4;
    let bytes = chunk;
    if (this.carry.length) {
      bytes = new Uint8Array(this.carry.length + chunk.length);
      bytes.set(this.carry);
      bytes.set(chunk, this.carry.length);
    }
    const whole = bytes.length - (bytes.length % width);
    this.carry = bytes.slice(whole);
    const n = whole / width;
    let l: Int16Array;
    let r: Int16Array;
    if (this.codec === "mulaw") {
      const all = g711Decode("mulaw", bytes.subarray(0, whole));
      l = new Int16Array(n);
      r = new Int16Array(n);
      for (let i = 0; i < n; i++) {
        l[i] = all[2 * i];
        r[i] = all[2 * i + 1];
      }
    } else {
      const view = new DataView(bytes.buffer, bytes.byteOffset, whole);
      l = new Int16Array(n);
      r = new Int16Array(n);
      for (let i = 0; i < n; i++) {
        l[i] = view.getInt16(4 * i, true);
        r[i] = view.getInt16(4 * i + 2, true);
      }
    }
    this.pushSamples(l, r);
  }

  /** Linear samples of both channels (equal lengths). */
  pushSamples(left: Int16Array, right: Int16Array): void {
    for (let i = 0; i < left.length; ) {
      const take = Math.min(this.frameSamples - this.filled, left.length - i);
      this.left.set(left.subarray(i, i + take), this.filled);
      this.right.set(right.subarray(i, i + take), this.filled);
      this.filled += take;
      i += take;
      if (this.filled === this.frameSamples) this.flushFrame();
    }
  }

  private flushFrame(): void {
    const at = this.frames * VAD_FRAME_MS;
    this.caller.frame(at, this.blocks(this.left));
    this.agent.frame(at, this.blocks(this.right));
    this.frames++;
    this.filled = 0;
  }

  private blocks(x: Int16Array): number[] {
    const out: number[] = [];
    for (let b = 0; b < this.frameSamples; b += this.blockSamples) {
      let sum = 0;
      for (let i = b; i < b + this.blockSamples; i++) sum += x[i] * x[i];
      out.push(sum / this.blockSamples);
    }
    return out;
  }

  /** The recording ended: the stretches under way close (a last partial frame is dropped: under 20 ms). */
  finish(): { caller: VoiceSegment[]; agent: VoiceSegment[]; exchanges: Exchange[] } {
    this.caller.close();
    this.agent.close();
    return { caller: this.caller.segments, agent: this.agent.segments, exchanges: exchanges(this.caller.segments, this.agent.segments) };
  }
}
