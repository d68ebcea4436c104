// What the carriers' media adapters share: naming a wire format, and the JSON stream protocol two carriers speak
// (a JSON text message is read by lib/helpers.ts's jsonMessage, which the voice agent's sockets use too).
import { base64ToBytes, bytesToBase64 } from "../../lib/audio/pcm";
import { jsonMessage } from "../../lib/helpers";
import type { MediaAdapter, MediaEvent, MediaFormat } from "./types";

const CODECS: Record<string, MediaFormat["codec"]> = {
  "audio/x-mulaw": "mulaw",
  "audio/pcmu": "mulaw",
  pcmu: "mulaw",
  ulaw: "mulaw",
  "audio/x-alaw": "alaw",
  "audio/pcma": "alaw",
  pcma: "alaw",
  "audio/x-l16": "pcm16",
  "audio/l16": "pcm16",
  "raw/slin": "pcm16",
  // Exotel's AgentStream documents its 16-bit linear PCM as audio/x-raw (bit_rate 16).
  "audio/x-raw": "pcm16",
  slin: "pcm16",
  l16: "pcm16",
};

/** A stream's announced encoding and rate as a format we carry; null when either is one we do not. */
export function wireFormat(encoding: unknown, rate: unknown): MediaFormat | null {
  const codec = typeof encoding === "string" ? CODECS[encoding.toLowerCase()] : undefined;
  const hz = Number(rate);
  if (!codec || (hz !== 8000 && hz !== 16000 && hz !== 24000)) return null;
  return { codec, rate: hz };
}

/** The messages the JSON stream protocols share: media (our own outbound track skipped), dtmf and stop. */
export function sharedEvents(m: Record<string, any>): MediaEvent[] {
  switch (m.event) {
    case "media":
      return m.media?.track === "outbound" || typeof m.media?.payload !== "string" ? [] : [{ kind: "audio", payload: base64ToBytes(m.media.payload) }];
    case "dtmf":
      return typeof m.dtmf?.digit === "string" ? [{ kind: "dtmf", digit: m.dtmf.digit }] : [];
    case "stop":
      return [{ kind: "stop" }];
    default:
      return [];
  }
}

/** How a Twilio-style protocol names things: the stream and call ids, the media format and its rate. */
export type StreamKeys = { stream: string; call: string; media: string; rate: string; streamInReplies: boolean };

export const TWILIO_KEYS: StreamKeys = { stream: "streamSid", call: "callSid", media: "mediaFormat", rate: "sampleRate", streamInReplies: true };

/**
 * The JSON stream protocol Twilio Media Streams defined, which Exotel and Telnyx copy under other key names:
 * connected, start (stream and call ids, media format), media (base64 payload; our own outbound track is skipped),
 * mark (echo of ours, once played), dtmf and stop in; media, mark and clear out.
 */
export function twilioStyleMedia(format: MediaFormat, k: StreamKeys): MediaAdapter {
  const out = (event: string, streamId: string, body: Record<string, unknown> = {}) =>
    JSON.stringify(k.streamInReplies ? { event, [k.stream]: streamId, ...body } : { event, ...body });
  return {
    format,
    parse(data) {
      const m = jsonMessage(data);
      switch (m?.event) {
        case "start": {
          const mf = m.start?.[k.media];
          const streamId = String(m[k.stream] ?? m.start?.[k.stream] ?? "");
          return [{ kind: "start", streamId, callId: m.start?.[k.call] ?? null, format: wireFormat(mf?.encoding, mf?.[k.rate]) }];
        }
        case "mark":
          return typeof m.mark?.name === "string" ? [{ kind: "mark", name: m.mark.name }] : [];
        default:
          return m ? sharedEvents(m) : [];
      }
    },
    audio: (frame, streamId) => out("media", streamId, { media: { payload: bytesToBase64(frame) } }),
    mark: (name, streamId) => out("mark", streamId, { mark: { name } }),
    clear: (streamId) => out("clear", streamId),
  };
}
