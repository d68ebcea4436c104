// Node side of the speech stand-in (test/calls/speech-standin.global.ts): Deepgram Flux on its v2 listen endpoint, as
// Deepgram documents it (developers.deepgram.com/docs/flux). The handshake's query is checked against the documented
// parameters and ranges (an unknown or out-of-range one is a 400, as Deepgram refuses it); the socket takes raw
// linear16 PCM and answers TurnInfo events: StartOfTurn at the caller's first voiced frame, Update about every 250 ms
// of audio, EagerEndOfTurn (only when eager_eot_threshold was asked for) after `eagerMs` of quiet, TurnResumed if the
// voice comes back before EndOfTurn, EndOfTurn after `eotMs` of quiet (each quiet counted in audio, not wall time);
// CloseStream closes it. The words are the test's script for its key (no recognition here): each voiced stretch
// adds the next entry of `words`.

/** What a test asks of the stand-in for its key (POST /_standin/flux?key=...). */
export type FluxScript = { words: string[]; eagerMs?: number; eotMs?: number /** the next entry (over all the key's sockets) */; next?: number };

const VOICE_RMS = 500; // as src/lib/audio/level.ts: the agent's own gate
const DOCUMENTED = new Set(["model", "encoding", "sample_rate", "eot_threshold", "eager_eot_threshold", "eot_timeout_ms", "keyterm", "mip_opt_out", "tag"]);

/** Deepgram's refusal of a Flux handshake's query, or null when it is as documented. */
export function fluxRefusal(q: URLSearchParams): string | null {
  for (const k of q.keys()) if (!DOCUMENTED.has(k)) return `Unknown parameter: ${k}`;
  if (!q.get("model")?.startsWith("flux-general")) return "model must be a Flux model";
  if (q.get("encoding") !== "linear16" || !["8000", "16000", "24000", "44100", "48000"].includes(q.get("sample_rate") ?? ""))
    return "encoding=linear16 needs a supported sample_rate";
  const num = (k: string) => (q.has(k) ? Number(q.get(k)) : undefined);
  const [eot, eager, timeout] = [num("eot_threshold"), num("eager_eot_threshold"), num("eot_timeout_ms")];
  if (eot !== undefined && !(eot >= 0.5 && eot <= 0.9)) return "eot_threshold must be 0.5-0.9";
  if (eager !== undefined && !(eager >= 0.3 && eager <= 0.9 && eager <= (eot ?? 0.7))) return "eager_eot_threshold must be 0.3-0.9 and at most eot_threshold";
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout >= 500 && timeout <= 10_000)) return "eot_timeout_ms must be 500-10000";
  return null;
}

type Socket = { send(data: string): void; close(code: number): void; on(event: string, fn: (...a: any[]) => void): void };

/** One Flux socket: `rec` is the stand-in's log entry for it (events sent and controls received are added). */
export function serveFlux(ws: Socket, q: URLSearchParams, script: FluxScript, rec: { events: string[]; controls: string[]; closed: number | null }) {
  const rate = Number(q.get("sample_rate"));
  const frame = (rate / 50) * 2; // bytes in 20 ms
  const eager = q.has("eager_eot_threshold");
  const eagerMs = script.eagerMs ?? 260;
  const eotMs = script.eotMs ?? 300;
  let pending = Buffer.alloc(0);
  let [turn, said, quietMs, audioMs, lastUpdate] = [0, [] as string[], 0, 0, 0];
  let state: "idle" | "speaking" | "eager" = "idle";
  let voicedMs = 0;
  // A turn takes the script's next entry once its voice has lasted a little; after TurnResumed, the one after.
  let wants = true;
  const send = (event: string) => {
    rec.events.push(event);
    ws.send(
      JSON.stringify({
        type: "TurnInfo",
        event,
        turn_index: turn,
        audio_window_start: 0,
        audio_window_end: audioMs / 1000,
        transcript: said.join(" "),
        words: [],
        end_of_turn_confidence: event === "EndOfTurn" ? 0.9 : 0.2,
      }),
    );
  };
  const onFrame = (voiced: boolean) => {
    audioMs += 20;
    if (voiced) {
      if (state !== "speaking") {
        send(state === "idle" ? "StartOfTurn" : "TurnResumed");
        [wants, voicedMs] = [true, 0];
      }
      voicedMs += 20;
      // The words arrive once the voice has lasted a little (Flux transcribes as it hears).
      const next = script.next ?? 0;
      if (wants && voicedMs >= 200 && next < script.words.length) {
        wants = false;
        said.push(script.words[next]);
        script.next = next + 1;
      }
      [state, quietMs] = ["speaking", 0];
    } else if (state !== "idle") {
      quietMs += 20;
      if (state === "speaking" && eager && quietMs >= eagerMs && said.length) {
        state = "eager";
        send("EagerEndOfTurn");
      }
      if (quietMs >= eotMs && said.length) {
        send("EndOfTurn");
        [state, said, turn] = ["idle", [], turn + 1];
      }
    }
    if (state !== "idle" && audioMs - lastUpdate >= 240) {
      lastUpdate = audioMs;
      send("Update");
    }
  };
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    if (!isBinary) {
      const type = JSON.parse(data.toString())?.type;
      rec.controls.push(type);
      if (type === "CloseStream") ws.close(1000);
      return;
    }
    pending = Buffer.concat([pending, data]);
    for (; pending.length >= frame; pending = pending.subarray(frame)) {
      let sum = 0;
      for (let i = 0; i < frame; i += 2) sum += pending.readInt16LE(i) ** 2;
      onFrame(Math.sqrt(sum / (frame / 2)) >= VOICE_RMS);
    }
  });
  ws.on("close", (code: number) => {
    rec.closed = code;
  });
  ws.send(JSON.stringify({ type: "Connected", request_id: "dg-flux-1", sequence_id: 0 }));
}
