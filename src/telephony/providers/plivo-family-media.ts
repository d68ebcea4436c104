// Plivo's audio streams (<Stream bidirectional="true">), which Vobiz speaks too: start (streamId, callId,
// mediaFormat), media and stop in, with playedStream answering our checkpoint once the audio before it has played.
// Out: playAudio (base64 with its content type and rate), checkpoint (a named mark) and clearAudio.
import { bytesToBase64 } from "../../lib/audio/pcm";
import { jsonMessage } from "../../lib/helpers";
import { sharedEvents, wireFormat } from "./media-kit";
import type { MediaAdapter } from "./types";

export const plivoFamilyMedia: MediaAdapter = {
  format: { codec: "mulaw", rate: 8000 },
  parse(data) {
    const m = jsonMessage(data);
    switch (m?.event) {
      case "start": {
        const mf = m.start?.mediaFormat;
        return [
          {
            kind: "start",
            streamId: String(m.start?.streamId ?? m.streamId ?? ""),
            callId: m.start?.callId ?? null,
            format: wireFormat(mf?.encoding, mf?.sampleRate),
          },
        ];
      }
      case "playedStream":
        return typeof m.name === "string" ? [{ kind: "mark", name: m.name }] : [];
      default:
        return m ? sharedEvents(m) : [];
    }
  },
  audio: (frame) => JSON.stringify({ event: "playAudio", media: { contentType: "audio/x-mulaw", sampleRate: 8000, payload: bytesToBase64(frame) } }),
  mark: (name, streamId) => JSON.stringify({ event: "checkpoint", streamId, name }),
  clear: (streamId) => JSON.stringify({ event: "clearAudio", streamId }),
};
