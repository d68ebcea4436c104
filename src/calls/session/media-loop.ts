// A call's audio both ways on one carrier socket. In: the carrier's payload → 20 ms frames → linear samples on the
// call's audio clock (one frame = 20 ms). Out: the agent's samples → resampled to the wire rate → encoded →
// framed → paced against that clock (a bounded lead: JITTER_LEAD_FRAMES) → the carrier's messages. The audio clock drives pacing and transcript times
// only; time limits run on the wall clock (the session's heartbeat).
import { FRAME_MS, Framer, frameBytes } from "../../lib/audio/framer";
import { G711_SILENCE, g711Decode, g711Encode } from "../../lib/audio/g711";
import { Pacer } from "../../lib/audio/pacer";
import { pcm16FromBytes, pcm16ToBytes } from "../../lib/audio/pcm";
import { Resampler, type SampleRate } from "../../lib/audio/resample";
import type { MediaAdapter, MediaFormat } from "../../telephony/providers/types";
import { Recorder } from "./recorder";

/**
 * How far the agent's audio goes out ahead of the callee's clock where the carrier can clear its buffer (all eight
 * media adapters here can): 400 ms, so a pause of the runtime (a busy isolate, a slow message) is never heard, and a
 * barge-in still stops what the callee hears at once through the carrier's clear. Without a clear, a short lead
 * (what a clear cannot take back, the callee hears).
 */
export const JITTER_LEAD_FRAMES = 20;
export const SHORT_LEAD_FRAMES = 3;

/** How long after a mark is sent its echo may take (the carrier's lead and jitter buffer) before it counts as played. */
export const MARK_CONFIRM_MS = 3000;

/** A pause in the callee's stream this long (by the wall clock) counts as a gap in the run's media figures. */
export const GAP_MS = 1000;

export class MediaLoop {
  format: MediaFormat;
  streamId: string;
  private inbound: Framer;
  private outbound: Framer;
  readonly pacer: Pacer;
  private readonly resamplers = new Map<number, Resampler>();
  recorder: Recorder | null;
  /** What the media carried on this connection (call-facts.ts): frames each way, pauses in the callee's stream. */
  readonly carried = { callerFrames: 0, agentFrames: 0, gaps: 0, lastInWall: 0 };
  /** Marks sent to a carrier that echoes them, by when the echo is due at the latest (wall clock), oldest first. */
  private readonly unconfirmed = new Map<string, number>();

  constructor(
    readonly adapter: MediaAdapter,
    private readonly send: (message: string | ArrayBuffer) => void,
    /** The call's audio clock (ms since its stream first started): goes on from where a restarted call left it. */
    public clockMs: number,
    streamId: string,
    recording: boolean,
  ) {
    this.format = adapter.format;
    this.streamId = streamId;
    this.pacer = new Pacer(adapter.clear ? JITTER_LEAD_FRAMES : SHORT_LEAD_FRAMES);
    this.inbound = new Framer(frameSize(this.format));
    this.outbound = new Framer(frameSize(this.format));
    this.recorder = recording ? new Recorder(this.format.rate) : null;
  }

  /** The stream's start: its id and, where it names one, its wire format. */
  start(streamId: string, format: MediaFormat | null): void {
    this.streamId = streamId;
    if (format) this.format = format;
    this.inbound = new Framer(frameSize(this.format));
    this.outbound = new Framer(frameSize(this.format));
    if (this.recorder && this.recorder.rate !== this.format.rate) this.recorder = new Recorder(this.format.rate);
  }

  /** The callee's payload as whole frames of linear samples, each advancing the clock by one frame. */
  frames(payload: Uint8Array, now = Date.now()): Int16Array[] {
    const out: Int16Array[] = [];
    this.inbound.push(payload, (f) => out.push(decode(this.format, f)));
    const c = this.carried;
    // A carrier streams a frame every 20 ms: a second without any is a gap the callee's audio did not reach us in.
    if (c.lastInWall && now - c.lastInWall >= GAP_MS) c.gaps++;
    c.lastInWall = now;
    c.callerFrames += out.length;
    return out;
  }

  /** Advances the clock by one frame; returns a full recording part to upload, if the frame filled one. */
  tick(samples: Int16Array): Uint8Array | null {
    this.clockMs += FRAME_MS;
    return this.recorder?.tick(this.clockMs, samples) ?? null;
  }

  /** Waiting for the next frame of the agent's audio to be sent (a reply's timing), with when it plays. */
  private sentWaiters: Array<(playsAtMs: number) => void> = [];

  onSent(sent: (playsAtMs: number) => void): void {
    this.sentWaiters.push(sent);
  }

  /** Queues the agent's speech (any rate) to be paced out. */
  say(samples: Int16Array, rate: SampleRate): void {
    let s = samples;
    if (rate !== this.format.rate) {
      const r = this.resamplers.get(rate) ?? new Resampler(rate, this.format.rate as SampleRate);
      this.resamplers.set(rate, r);
      s = r.convert(samples);
    }
    this.outbound.push(encode(this.format, s), (f) => this.pacer.enqueue(f));
    // Out at once: the first frame of a reply does not wait for the callee's next frame to come in (up to 20 ms).
    this.sendDue();
  }

  /** A mark after the speech queued so far (its last partial frame padded with silence). */
  mark(name: string): void {
    const silence = this.format.codec === "pcm16" ? 0 : G711_SILENCE[this.format.codec];
    const rest = this.outbound.flush(silence);
    if (rest) this.pacer.enqueue(rest);
    this.pacer.mark(name);
    this.sendDue();
  }

  /** Barge-in: drops what is held back, tells the carrier to drop what it holds where it can; the marks never played. */
  clear(): string[] {
    this.outbound.reset();
    // What the carrier echoes for marks it dropped tells the agent nothing new: it knows what was cut off.
    this.unconfirmed.clear();
    const dropped = this.pacer.clear(this.clockMs);
    if (this.adapter.clear) {
      this.send(this.adapter.clear(this.streamId));
      // The carrier drops what it still held too: none of it was heard.
      this.recorder?.dropAgentFrom(this.clockMs);
    }
    return dropped;
  }

  /**
   * Sends what the pacer lets out now. Returns the marks to count as played: by the clock for carriers that echo
   * none, and for those that do, a mark whose echo is overdue (lost, or a carrier that skips it), so a goodbye never
   * waits on a confirmation that will not come.
   */
  pump(now = Date.now()): string[] {
    this.sendDue(now);
    const played = this.pacer.played(this.clockMs);
    if (!this.adapter.mark) return played;
    const overdue: string[] = [];
    for (const [name, by] of this.unconfirmed) {
      if (by > now) break;
      overdue.push(name);
      this.unconfirmed.delete(name);
    }
    return overdue;
  }

  /** Sends the frames and marks the pacer lets out now. */
  private sendDue(now = Date.now()): void {
    for (const item of this.pacer.due(this.clockMs)) {
      if (item.kind === "frame") {
        this.send(this.adapter.audio(item.frame, this.streamId));
        this.carried.agentFrames++;
        this.recorder?.agentFrame(item.at, decode(this.format, item.frame));
        if (this.sentWaiters.length) for (const sent of this.sentWaiters.splice(0)) sent(item.at);
      } else if (this.adapter.mark) {
        this.send(this.adapter.mark(item.name, this.streamId));
        this.unconfirmed.set(item.name, now + MARK_CONFIRM_MS);
      }
    }
  }

  /** The carrier's echo of a mark: true the first time (false: counted as played already, or cleared). */
  confirmed(name: string): boolean {
    return this.unconfirmed.delete(name);
  }
}

const frameSize = (f: MediaFormat) => frameBytes(f.rate, f.codec === "pcm16" ? 2 : 1);

function decode(f: MediaFormat, bytes: Uint8Array): Int16Array {
  return f.codec === "pcm16" ? pcm16FromBytes(bytes) : g711Decode(f.codec, bytes);
}

function encode(f: MediaFormat, samples: Int16Array): Uint8Array {
  return f.codec === "pcm16" ? pcm16ToBytes(samples) : g711Encode(f.codec, samples);
}
