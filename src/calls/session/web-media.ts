// The browser's media socket (a web call, docs/web-calls.md): not a carrier, but spoken to as one, so the call session
// runs the same agent, engines, transcript and recording. JSON control messages and binary frames of 16-bit
// little-endian PCM at 16 kHz, both ways:
//   browser → edgedial: {"type":"start"}, binary audio, {"type":"mark","name"} once the audio before it has played,
//                       {"type":"text","text"} a typed turn (offline engines understand no speech), {"type":"typing"}
//                       the caller is typing one (activity for the silence limits, not a turn),
//                       {"type":"stop"} (or closing the socket): the caller hung up.
//   edgedial → browser: binary audio, {"type":"mark","name"}, {"type":"clear"} (drop what is queued: the caller
//                       barged in), {"type":"transcript",...} for each turn as it is logged, then {"type":"state",...}
//                       (the agent's node, gathered values, disposition and tool calls: the playground's live view).
// There is no carrier to reconnect: a closed socket is the end of the call.
import type { Turn, VoiceAgent } from "../../agent/voice-agent";
import { jsonMessage } from "../../lib/helpers";
import { getProvider } from "../../telephony/providers/registry";
import type { MediaAdapter, MediaEvent, ProviderName } from "../../telephony/providers/types";

/** The run's `provider` and the session's for a web call (no carrier, no configuration). */
export const WEB_PROVIDER = "web";
export type SessionProvider = ProviderName | typeof WEB_PROVIDER;

export const WEB_SAMPLE_RATE = 16000;
/** A mark or stream name the browser may send back: short, printable. */
const NAME = /^[\w.:-]{1,64}$/;
/** The longest typed turn: a few spoken sentences' worth (a longer one is ignored, as unreadable input is). */
export const TYPED_TURN_MAX_CHARS = 1000;

export const webMedia: MediaAdapter = {
  format: { codec: "pcm16", rate: WEB_SAMPLE_RATE },
  closeEndsCall: true,
  parse(data: string | ArrayBuffer): MediaEvent[] {
    if (typeof data !== "string") {
      // An odd byte count cannot be 16-bit samples: a client bug, counted as unreadable rather than heard as noise.
      if (data.byteLength % 2) throw new Error("audio frames are 16-bit samples: an even number of bytes");
      return data.byteLength ? [{ kind: "audio", payload: new Uint8Array(data) }] : [];
    }
    const m = jsonMessage(data);
    if (!m) throw new Error("a text message must be a JSON object");
    switch (m.type) {
      case "start":
        return [{ kind: "start", streamId: "web", callId: null, format: null }];
      case "stop":
        return [{ kind: "stop" }];
      case "mark":
        return typeof m.name === "string" && NAME.test(m.name) ? [{ kind: "mark", name: m.name }] : [];
      case "text": {
        const text = typeof m.text === "string" ? m.text.replace(/\s+/g, " ").trim() : "";
        return text && text.length <= TYPED_TURN_MAX_CHARS ? [{ kind: "text", text }] : [];
      }
      case "typing":
        return [{ kind: "typing" }];
      default:
        // Unknown control messages are ignored, so a newer page can talk to an older service.
        return [];
    }
  },
  audio(frame: Uint8Array): ArrayBuffer {
    return frame.slice().buffer;
  },
  mark: (name: string) => JSON.stringify({ type: "mark", name }),
  clear: () => JSON.stringify({ type: "clear" }),
};

/** The media adapter of a session's provider: a carrier's, or the browser's for a web call; null where there is none. */
export function mediaAdapterFor(provider: string): MediaAdapter | null {
  if (provider === WEB_PROVIDER) return webMedia;
  try {
    return getProvider(provider).calls?.media ?? null;
  } catch {
    return null;
  }
}

/** The same, for a session about to carry the call's media: a provider without a media stream is an error. */
export function requireMediaAdapter(provider: string): MediaAdapter {
  const adapter = mediaAdapterFor(provider);
  if (!adapter) throw new Error(`${provider} has no media stream`);
  return adapter;
}

/** The live transcript's message for one logged turn (the browser shows the caller as `user`; `tool`: an action taken). */
export function turnMessage(turn: Turn): string {
  return JSON.stringify({
    type: "transcript",
    role: turn.role === "callee" ? "user" : turn.role,
    text: turn.text,
    start_ms: Math.round(turn.startMs),
    end_ms: Math.round(turn.endMs),
    interrupted: turn.interrupted ?? false,
  });
}

/** Where the agent is after a turn: its node, the nodes it went through, what it gathered, its disposition and actions. */
export function stateMessage(agent: VoiceAgent): string | null {
  const o = agent.outcome?.();
  if (!o) return null;
  const nodes = o.nodes ?? [];
  const tools = (o.toolCalls ?? []).map((t) => ({
    name: t.name,
    arguments: t.arguments,
    status: t.status,
    http_status: t.http_status,
    error: t.error ?? null,
  }));
  return JSON.stringify({ type: "state", node: nodes.at(-1) ?? null, nodes, gathered: o.gathered, disposition: o.disposition, tool_calls: tools });
}

/** A web call's live view: the browser sees each turn as it is logged, then the agent's state (nothing for a carrier's call). */
export function sendTurn(provider: string | null, ws: WebSocket, turn: Turn, agent: VoiceAgent): void {
  if (provider !== WEB_PROVIDER) return;
  try {
    ws.send(turnMessage(turn));
    const state = stateMessage(agent);
    if (state) ws.send(state);
  } catch {
    // the browser has gone; the call is ending
  }
}
