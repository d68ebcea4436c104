// Vonage's WebSocket endpoint (NCCO connect): a first text message `websocket:connected` naming the content type,
// then binary frames of 16-bit linear PCM at 16 kHz (640 bytes each way per 20 ms). Text messages carry control:
// `{"action":"notify","payload":{…}}` is answered with `{"event":"websocket:notify","payload":{…}}` once the audio
// sent before it has played (our marks, the name in the payload), and `{"action":"clear"}` drops the audio Vonage
// still holds (answered with `websocket:cleared`, which needs nothing from us).
import { jsonMessage } from "../../../lib/helpers";
import { wireFormat } from "../media-kit";
import type { MediaAdapter } from "../types";

export const vonageMedia: MediaAdapter = {
  format: { codec: "pcm16", rate: 16000 },
  parse(data) {
    if (typeof data !== "string") return [{ kind: "audio", payload: new Uint8Array(data) }];
    const m = jsonMessage(data);
    switch (m?.event) {
      case "websocket:connected": {
        const [type, rate] = String(m["content-type"] ?? "").split(";rate=");
        return [{ kind: "start", streamId: "", callId: null, format: wireFormat(type, rate) }];
      }
      case "websocket:notify":
        return typeof m.payload?.name === "string" ? [{ kind: "mark", name: m.payload.name }] : [];
      case "websocket:dtmf":
        return m.digit != null ? [{ kind: "dtmf", digit: String(m.digit) }] : [];
      default:
        return [];
    }
  },
  audio: (frame) => frame.slice().buffer,
  // Vonage sends no stop: its socket closes when the call ends.
  closeEndsCall: true,
  mark: (name) => JSON.stringify({ action: "notify", payload: { name } }),
  clear: () => JSON.stringify({ action: "clear" }),
};
