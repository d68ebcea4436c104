// Vonage's WebSocket endpoint (NCCO connect): a first text message `websocket:connected` naming the content type,
// then binary frames of 16-bit linear PCM at 16 kHz (640 bytes each way per 20 ms). Vonage echoes no marks and
// has no clear: the session's pacer holds back what is not yet due, and marks go by its clock.
import { jsonMessage, wireFormat } from "../media-kit";
import type { MediaAdapter } from "../types";

export const vonageMedia: MediaAdapter = {
  format: { codec: "pcm16", rate: 16000 },
  parse(data) {
    if (typeof data !== "string") return [{ kind: "audio", payload: new Uint8Array(data) }];
    const m = jsonMessage(data);
    if (m?.event === "websocket:connected") {
      const [type, rate] = String(m["content-type"] ?? "").split(";rate=");
      return [{ kind: "start", streamId: "", callId: null, format: wireFormat(type, rate) }];
    }
    if (m?.event === "websocket:dtmf" && m.digit != null) return [{ kind: "dtmf", digit: String(m.digit) }];
    return [];
  },
  audio: (frame) => frame.slice().buffer,
};
