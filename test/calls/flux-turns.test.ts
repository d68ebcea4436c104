// Deepgram Flux on Workers AI ends the caller's turn itself: its EndOfTurn event ends the turn at once, without the
// energy gate's 700 ms of silence. Workers AI is faked at the binding boundary only (the chat model's server-sent
// events, Aura's PCM, and Flux's WebSocket speaking its TurnInfo protocol), as in conversation-workers-ai.test.ts.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ClipSpeechToText } from "../../src/agent/clip-speech";
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import { WORKERS_AI_TTS_MODEL } from "../../src/agent/workers-ai-speech";
import { callSessionStub } from "../../src/calls/session/stub";
import { isVoiced } from "../../src/lib/audio/level";
import { listen, listenUntil, SEATS_DISPOSITIONS, SURE, startSeatsCall } from "./conversation-support";
import { connect } from "./media-support";
import { setup } from "./support";

const FLUX = "@cf/deepgram/flux";
/** Flux ends the turn after this much quiet following speech (its end-of-turn model, stood in for by a short wait). */
const FLUX_EOT_MS = 300;

class FakeAi {
  readonly chats: string[] = [];
  private readonly recognizer = new ClipSpeechToText([SURE]);

  async run(model: string, inputs: Record<string, any>, options?: Record<string, unknown>): Promise<unknown> {
    if (model === WORKERS_AI_CHAT_MODEL) {
      const last = [...inputs.messages].reverse().find((m: { role: string }) => m.role === "user");
      this.chats.push(String(last?.content ?? ""));
      const chunk = { response: last ? "Great, thank you." : "Hi Ada!", tool_calls: [], usage: { prompt_tokens: 5, completion_tokens: 3 } };
      return new Response(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`).body!;
    }
    if (model === WORKERS_AI_TTS_MODEL)
      return new Uint8Array(new Int16Array((16000 * 60 * inputs.text.length) / 1000).map((_, i) => Math.round(4000 * Math.sin(i / 6))).buffer);
    if (model === FLUX && options?.websocket) return this.flux(Number(inputs.sample_rate));
    throw new Error(`no such model: ${model}`);
  }

  /** Flux's protocol: PCM in; TurnInfo EndOfTurn with the turn's transcript once the caller paused; CloseStream closes. */
  private flux(rate: number): Response {
    const [client, server] = Object.values(new WebSocketPair());
    server.accept();
    const frame = rate / 50;
    let samples = new Int16Array(0);
    let [voiced, quietMs, ended] = [0, 0, false];
    server.addEventListener("message", async (e) => {
      if (typeof e.data === "string") {
        if (JSON.parse(e.data).type === "CloseStream") server.close(1000, "done");
        return;
      }
      const chunk = new Int16Array(await new Response(e.data as ArrayBuffer).arrayBuffer());
      const joined = new Int16Array(samples.length + chunk.length);
      joined.set(samples);
      joined.set(chunk, samples.length);
      samples = joined;
      for (let i = 0; i + frame <= chunk.length; i += frame) {
        if (isVoiced(chunk.subarray(i, i + frame))) [voiced, quietMs] = [voiced + 1, 0];
        else quietMs += 20;
      }
      if (ended || voiced < 10 || quietMs < FLUX_EOT_MS) return;
      ended = true;
      // The speech in what it got (the quiet around it trimmed), recognized among the callee's clips.
      const on: number[] = [];
      for (let i = 0; i + frame <= samples.length; i += frame) if (isVoiced(samples.subarray(i, i + frame))) on.push(i);
      const transcript = await this.recognizer.transcribe({ samples: samples.subarray(on[0], on.at(-1)! + frame), rate: rate as 8000 });
      server.send(JSON.stringify({ type: "TurnInfo", event: "EndOfTurn", turn_index: 0, transcript, end_of_turn_confidence: 0.9 }));
    });
    return new Response(null, { status: 101, webSocket: client });
  }
}

describe("Flux's turn events on Workers AI", () => {
  it("EndOfTurn ends the caller's turn without waiting for the silence bound: the reply starts well under 700 ms after their words", async () => {
    const s = await setup("twilio");
    const { runId } = await startSeatsCall(s, {
      call_disposition_codes: SEATS_DISPOSITIONS,
      workflow_configurations: { voice_agent: { stt: { provider: "workers-ai", model: FLUX } } },
    });
    const ai = new FakeAi();
    await runInDurableObject(callSessionStub(env, runId), (instance) => {
      const o = instance as unknown as { env: Env };
      o.env = { ...o.env, VOICE_AGENT: "conversation", AI: ai } as unknown as Env;
    });
    const callee = await connect("twilio", runId);
    await listenUntil(callee, () => callee.played.length >= 1);
    await listen(callee, 200);
    callee.speak(SURE.samples);
    const spokeUntil = callee.clockMs;
    const frames = callee.received.length;
    await listenUntil(callee, () => callee.received.length > frames);
    // The clip ends with a little quiet of its own; the reply's first audio came long before the 700 ms bound.
    expect(callee.clockMs - spokeUntil).toBeLessThan(500);
    expect(ai.chats).toContain("Sure, tell me more.");
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.turns.map((t) => [t.role, t.text]).slice(0, 2)).toEqual([
      ["agent", "Hi Ada!"],
      ["callee", "Sure, tell me more."],
    ]);
  });
});
