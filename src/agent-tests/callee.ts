// The callee's side of a carrier's media stream, as the simulator plays it and an agent test's caller speaks it: each
// carrier's own framing, codec and control messages. It lives here, not in src/dev/simulator/ (which re-exports it),
// because the Worker itself speaks it to its own call sessions in agent tests, and nothing in the app may import the
// simulator. A `CalleeStream` opens the stream (connected, start), sends the callee's speech in 20 ms
// frames on the wire format and keeps what the service sends back. Like the carriers, it plays that audio out in
// real time: its clock is its own frames (each 20 ms frame it sends is 20 ms passing, which is how tests drive
// time), audio queued ahead of the clock plays at 1x, a mark is confirmed only once the audio before it has played
// by that clock, and a clear drops what has not played (releasing the pending marks where the carrier documents so).
import { frameBytes } from "../lib/audio/framer";
import { g711Decode, g711Encode } from "../lib/audio/g711";
import { base64ToBytes, bytesToBase64, pcm16FromBytes, pcm16ToBytes } from "../lib/audio/pcm";
import type { MediaFormat } from "../telephony/providers/types";

const randomHex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");

export type Played = { kind: "audio"; payload: Uint8Array } | { kind: "mark"; name: string; payload?: unknown } | { kind: "clear" };

export interface CalleeProtocol {
  format: MediaFormat;
  /** What the carrier sends first: its connected message and the stream's start. */
  opening(callId: string, streamId: string): string[];
  audio(wire: Uint8Array, streamId: string, seq: number): string | ArrayBuffer;
  /** The carrier's end of the stream; null where hanging up just closes the socket. */
  stop(streamId: string): string | null;
  /** Reads one message the service sent. */
  read(data: string | ArrayBuffer): Played | null;
  /** The carrier's echo of a mark once the audio before it has played; absent where it has none. */
  markPlayed?(name: string, streamId: string, payload?: unknown): string;
  /** Whether a clear sends the pending marks back at once (true) or drops them unanswered (false). */
  clearEchoesMarks: boolean;
  /** The carrier's acknowledgement of a clear, where it sends one. */
  cleared?(streamId: string): string;
  /** The carrier's report of a key the callee pressed, on the stream, as it documents it. */
  dtmf(digit: string, streamId: string, seq: number): string;
}

function json(data: string | ArrayBuffer): Record<string, any> | null {
  try {
    return typeof data === "string" ? JSON.parse(data) : null;
  } catch {
    return null;
  }
}

type Keys = { stream: string; call: string; media: string; rate: string };
const TWILIO: Keys = { stream: "streamSid", call: "callSid", media: "mediaFormat", rate: "sampleRate" };

/**
 * Twilio's Media Streams, and the carriers that copy it under other key names (Exotel, Telnyx, Cloudonix). A mark
 * comes back once the audio before it has played, at once when nothing is queued; a clear sends the pending marks
 * back (documented by Twilio and Telnyx; assumed for Exotel and Cloudonix, which copy Twilio's protocol).
 */
function twilioStyle(format: MediaFormat, encoding: string, k: Keys): CalleeProtocol {
  return {
    format,
    opening: (callId, streamId) => [
      JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }),
      JSON.stringify({
        event: "start",
        sequenceNumber: "1",
        [k.stream]: streamId,
        start: { [k.stream]: streamId, [k.call]: callId, tracks: ["inbound"], [k.media]: { encoding, [k.rate]: format.rate, channels: 1 } },
      }),
    ],
    audio: (wire, streamId, seq) =>
      JSON.stringify({
        event: "media",
        sequenceNumber: String(seq + 2),
        [k.stream]: streamId,
        media: { track: "inbound", chunk: String(seq + 1), timestamp: String(seq * 20), payload: bytesToBase64(wire) },
      }),
    stop: (streamId) => JSON.stringify({ event: "stop", [k.stream]: streamId }),
    // Twilio names the track the key came in on; Telnyx and Exotel send the digit alone (Exotel with its duration).
    dtmf: (digit, streamId, seq) =>
      JSON.stringify({
        event: "dtmf",
        sequenceNumber: String(seq + 2),
        [k.stream]: streamId,
        dtmf: k === TWILIO ? { track: "inbound_track", digit } : k.stream === "stream_sid" ? { digit, duration: "100" } : { digit },
      }),
    read(data) {
      const m = json(data);
      if (m?.event === "media" && typeof m.media?.payload === "string") return { kind: "audio", payload: base64ToBytes(m.media.payload) };
      if (m?.event === "mark" && typeof m.mark?.name === "string") return { kind: "mark", name: m.mark.name };
      if (m?.event === "clear") return { kind: "clear" };
      return null;
    },
    markPlayed: (name, streamId) => JSON.stringify({ event: "mark", [k.stream]: streamId, mark: { name } }),
    clearEchoesMarks: true,
  };
}

/**
 * Plivo's audio stream (Vobiz's too): playAudio, checkpoint and clearAudio from the service; playedStream once the
 * audio before a checkpoint has played, and clearedAudio for a clear, after which pending checkpoints are never
 * answered (as both document).
 */
const plivoStyle: CalleeProtocol = {
  format: { codec: "mulaw", rate: 8000 },
  opening: (callId, streamId) => [
    JSON.stringify({
      event: "start",
      sequenceNumber: 0,
      start: { callId, streamId, accountId: "MA0000", tracks: ["inbound"], mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000 } },
    }),
  ],
  audio: (wire, streamId, seq) =>
    JSON.stringify({
      event: "media",
      sequenceNumber: seq + 1,
      streamId,
      media: { track: "inbound", timestamp: String(seq * 20), chunk: seq + 1, payload: bytesToBase64(wire) },
    }),
  stop: (streamId) => JSON.stringify({ event: "stop", streamId }),
  dtmf: (digit, streamId, seq) => JSON.stringify({ event: "dtmf", sequenceNumber: seq + 1, streamId, dtmf: { digit } }),
  read(data) {
    const m = json(data);
    if (m?.event === "playAudio" && typeof m.media?.payload === "string") return { kind: "audio", payload: base64ToBytes(m.media.payload) };
    if (m?.event === "checkpoint" && typeof m.name === "string") return { kind: "mark", name: m.name };
    if (m?.event === "clearAudio") return { kind: "clear" };
    return null;
  },
  markPlayed: (name, streamId) => JSON.stringify({ event: "playedStream", streamId, name }),
  clearEchoesMarks: false,
  cleared: (streamId) => JSON.stringify({ sequenceNumber: 0, event: "clearedAudio", streamId }),
};

/**
 * Vonage's WebSocket: a connected message, then binary 16 kHz linear frames both ways; hanging up closes it. The
 * service's `notify` action is answered with `websocket:notify` (its payload as sent) once the audio before it has
 * played, and `clear` drops the buffered audio and is answered with `websocket:cleared`. What becomes of a pending
 * notify on a clear is not documented: here it is dropped.
 */
const vonageStyle: CalleeProtocol = {
  format: { codec: "pcm16", rate: 16000 },
  opening: () => [JSON.stringify({ event: "websocket:connected", "content-type": "audio/l16;rate=16000" })],
  audio: (wire) => wire.slice().buffer,
  stop: () => null,
  // A text message with the digit and how long it was held (ms).
  dtmf: (digit) => JSON.stringify({ event: "websocket:dtmf", digit, duration: 100 }),
  read(data) {
    if (typeof data !== "string") return { kind: "audio", payload: new Uint8Array(data) };
    const m = json(data);
    if (m?.action === "notify" && m.payload && typeof m.payload === "object") {
      return { kind: "mark", name: typeof m.payload.name === "string" ? m.payload.name : JSON.stringify(m.payload), payload: m.payload };
    }
    if (m?.action === "clear") return { kind: "clear" };
    return null;
  },
  markPlayed: (name, _streamId, payload) => JSON.stringify({ event: "websocket:notify", payload: payload ?? { name } }),
  clearEchoesMarks: false,
  cleared: () => JSON.stringify({ event: "websocket:cleared" }),
};

/**
 * Asterisk's WebSocket channel driver as ARI external media speaks it with JSON control: MEDIA_START, then binary
 * frames both ways; MARK_MEDIA is answered with MEDIA_MARK_PROCESSED when the mark reaches the front of the queue,
 * FLUSH_MEDIA drops what is queued (marks queued with it are taken to go too: not documented). The call's end
 * closes the socket.
 */
const asteriskStyle: CalleeProtocol = {
  format: { codec: "mulaw", rate: 8000 },
  opening: (_callId, streamId) => [
    JSON.stringify({
      event: "MEDIA_START",
      connection_id: "edgedial",
      channel: `WebSocket/edgedial/0x${randomHex(6)}`,
      channel_id: streamId,
      format: "ulaw",
      optimal_frame_size: 160,
      ptime: 20,
      channel_variables: { MEDIA_WEBSOCKET_CONNECTION_ID: "edgedial", MEDIA_WEBSOCKET_OPTIMAL_FRAME_SIZE: "160" },
    }),
  ],
  audio: (wire) => wire.slice().buffer,
  stop: () => null,
  // chan_websocket's JSON event when a key's tone ends (DTMF_END).
  dtmf: (digit, streamId) => JSON.stringify({ event: "DTMF_END", channel_id: streamId, digit }),
  read(data) {
    if (typeof data !== "string") return { kind: "audio", payload: new Uint8Array(data) };
    const m = json(data);
    if (m?.command === "MARK_MEDIA" && typeof m.correlation_id === "string") return { kind: "mark", name: m.correlation_id };
    if (m?.command === "FLUSH_MEDIA") return { kind: "clear" };
    return null;
  },
  markPlayed: (name, streamId) => JSON.stringify({ event: "MEDIA_MARK_PROCESSED", channel_id: streamId, correlation_id: name }),
  clearEchoesMarks: false,
};

export const CALLEE_PROTOCOLS = {
  twilio: twilioStyle({ codec: "mulaw", rate: 8000 }, "audio/x-mulaw", TWILIO),
  cloudonix: twilioStyle({ codec: "mulaw", rate: 8000 }, "audio/x-mulaw", TWILIO),
  exotel: twilioStyle({ codec: "pcm16", rate: 8000 }, "raw/slin", { stream: "stream_sid", call: "call_sid", media: "media_format", rate: "sample_rate" }),
  telnyx: twilioStyle({ codec: "mulaw", rate: 8000 }, "PCMU", { stream: "stream_id", call: "call_control_id", media: "media_format", rate: "sample_rate" }),
  plivo: plivoStyle,
  vobiz: plivoStyle,
  vonage: vonageStyle,
  ari: asteriskStyle,
} satisfies Record<string, CalleeProtocol>;

export type MediaProvider = keyof typeof CALLEE_PROTOCOLS;

export function toWire(format: MediaFormat, samples: Int16Array): Uint8Array {
  return format.codec === "pcm16" ? pcm16ToBytes(samples) : g711Encode(format.codec, samples);
}

export function fromWire(format: MediaFormat, bytes: Uint8Array): Int16Array {
  return format.codec === "pcm16" ? pcm16FromBytes(bytes) : g711Decode(format.codec, bytes);
}

/** A mark the callee's carrier sent back: when (by the callee's clock), and whether a clear released it unplayed. */
export type Echo = { name: string; atMs: number; cleared: boolean };

export type CalleeOptions = {
  /** The carrier's jitter buffer: audio starts playing no sooner than this long after it arrives. */
  playoutDelayMs?: number;
};

/** One simulated callee on an open media socket. */
export class CalleeStream {
  readonly streamId = `MZ${randomHex(16)}`;
  /** The service's audio as it arrived (played or not), on the wire format. */
  received: Uint8Array[] = [];
  /** The marks the service sent, as they arrived. */
  marks: string[] = [];
  /** The carrier's answers to those marks, in order. */
  echoed: Echo[] = [];
  clears = 0;
  /** The service's audio a clear dropped before it played. */
  droppedMs = 0;
  /** The callee's clock: the audio it has sent so far. */
  clockMs = 0;
  closed: { code: number; reason: string } | null = null;
  private seq = 0;
  private waiters: Array<() => void> = [];
  /** Audio still to play, as spans of the clock (in order, not overlapping). */
  private queue: Array<{ start: number; end: number }> = [];
  /** Marks waiting for the audio before them, with when it will have played. */
  private pending: Array<{ name: string; payload?: unknown; at: number }> = [];
  private readonly playoutDelayMs: number;

  constructor(
    readonly ws: WebSocket,
    readonly protocol: CalleeProtocol,
    options: CalleeOptions = {},
  ) {
    this.playoutDelayMs = options.playoutDelayMs ?? 0;
    // Binary messages as ArrayBuffers (read at once, in order), not Blobs.
    (ws as { binaryType?: string }).binaryType = "arraybuffer";
    ws.addEventListener("message", (e) => {
      const p = protocol.read(e.data as string | ArrayBuffer);
      if (p?.kind === "audio") this.queueAudio(p.payload);
      else if (p?.kind === "mark") this.queueMark(p.name, p.payload);
      else if (p?.kind === "clear") this.clear();
      this.wake();
    });
    ws.addEventListener("close", (e) => {
      this.closed = { code: e.code, reason: e.reason };
      this.wake();
    });
  }

  /** The marks the carrier confirmed as played (not those a clear released). */
  get played(): string[] {
    return this.echoed.filter((e) => !e.cleared).map((e) => e.name);
  }

  /** The service's audio received but not yet played (nor dropped). */
  get unplayedMs(): number {
    return this.queue.reduce((n, q) => n + q.end - Math.max(q.start, this.clockMs), 0);
  }

  private msOf(bytes: number): number {
    const f = this.protocol.format;
    return (bytes / (f.codec === "pcm16" ? 2 : 1) / f.rate) * 1000;
  }

  /** Audio plays after what is queued, and no sooner than it arrived (plus the jitter buffer). */
  private queueAudio(payload: Uint8Array) {
    this.received.push(payload);
    const start = Math.max(this.queue.at(-1)?.end ?? 0, this.clockMs + this.playoutDelayMs);
    this.queue.push({ start, end: start + this.msOf(payload.length) });
  }

  private queueMark(name: string, payload: unknown) {
    this.marks.push(name);
    if (!this.protocol.markPlayed) return;
    // Answered once the audio queued before it has played: at once when none is.
    this.pending.push({ name, payload, at: this.queue.at(-1)?.end ?? 0 });
    this.release();
  }

  /** Drops what has not played; the pending marks go back at once, or never, as the carrier does it. */
  private clear() {
    this.clears++;
    this.droppedMs += this.unplayedMs;
    this.queue = [];
    const pending = this.pending.splice(0);
    if (this.protocol.clearEchoesMarks) for (const m of pending) this.echo(m, true);
    if (this.protocol.cleared && !this.closed) this.ws.send(this.protocol.cleared(this.streamId));
  }

  /** Answers the marks whose audio has played by the clock; forgets the audio played. */
  private release() {
    while (this.queue.length && this.queue[0].end <= this.clockMs) this.queue.shift();
    while (this.pending.length && this.pending[0].at <= this.clockMs) this.echo(this.pending.shift()!, false);
  }

  private echo(m: { name: string; payload?: unknown }, cleared: boolean) {
    this.echoed.push({ name: m.name, atMs: this.clockMs, cleared });
    if (!this.closed) this.ws.send(this.protocol.markPlayed!(m.name, this.streamId, m.payload));
  }

  private wake() {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves once `test` holds, re-checked on every message or close. */
  until(test: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => (test() ? resolve() : this.waiters.push(check));
      check();
    });
  }

  open(callId: string): void {
    for (const m of this.protocol.opening(callId, this.streamId)) this.ws.send(m);
  }

  /** Sends linear samples (at the wire rate) as 20 ms frames; a partial last frame is sent as it is. */
  speak(samples: Int16Array): number {
    const n = frameBytes(this.protocol.format.rate, 1); // samples per frame
    let frames = 0;
    for (let i = 0; i < samples.length; i += n, frames++) this.sendWire(toWire(this.protocol.format, samples.subarray(i, i + n)));
    return frames;
  }

  /** Sends `ms` of digital silence. */
  silence(ms: number): number {
    return this.speak(new Int16Array((this.protocol.format.rate * ms) / 1000));
  }

  /** Sends one frame: its length passes on the callee's clock, and the marks played by then are answered. */
  sendWire(wire: Uint8Array): void {
    this.ws.send(this.protocol.audio(wire, this.streamId, this.seq++));
    this.clockMs += this.msOf(wire.length);
    this.release();
    this.wake();
  }

  /** The callee presses keys: the carrier's dtmf message on the stream for each (no audio: carriers report keys apart). */
  press(digits: string): void {
    for (const d of digits) this.ws.send(this.protocol.dtmf(d, this.streamId, this.seq++));
  }

  hangup(): void {
    const stop = this.protocol.stop(this.streamId);
    if (stop === null) this.ws.close(1000, "callee hung up");
    else this.ws.send(stop);
  }

  /** The service's audio so far, joined and on the wire format. */
  receivedWire(): Uint8Array {
    const out = new Uint8Array(this.received.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of this.received) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}
