import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ClipSpeechToText } from "../../src/agent/clip-speech";
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import { WORKERS_AI_STT_MODEL, WORKERS_AI_TTS_MODEL, WORKERS_AI_TURN_MODEL } from "../../src/agent/workers-ai-speech";
import { callSessionStub } from "../../src/calls/session/stub";
import { isVoiced } from "../../src/lib/audio/level";
import { readWav } from "../../src/lib/audio/wav";
import { fakeAiCall, listenUntil, SURE } from "./conversation-support";
import { deepgramLiveSocket } from "./flux-support";

class FakeAi {
  readonly verdicts: { rate: number; seconds: number }[] = [];
  private readonly recognizer = new ClipSpeechToText([SURE]);
  constructor(private readonly complete: boolean) {}

  async run(model: string, inputs: Record<string, any>, options?: Record<string, unknown>): Promise<unknown> {
    if (model === WORKERS_AI_CHAT_MODEL) {
      const last = [...inputs.messages].reverse().find((m: { role: string }) => m.role === "user");
      const chunk = { response: last ? "Great, thank you." : "Hi Ada!", tool_calls: [], usage: { prompt_tokens: 5, completion_tokens: 3 } };
      return new Response(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`).body!;
    }
    if (model === WORKERS_AI_TTS_MODEL)
      return new Uint8Array(new Int16Array((16000 * 60 * inputs.text.length) / 1000).map((_, i) => Math.round(4000 * Math.sin(i / 6))).buffer);
    if (model === WORKERS_AI_TURN_MODEL) {
      expect(inputs.audio.contentType).toBe("audio/wav");
      const w = readWav(new Uint8Array(await new Response(inputs.audio.body).arrayBuffer()));
      this.verdicts.push({ rate: w.rate, seconds: w.samples.length / w.rate });
      return { is_complete: this.complete, probability: this.complete ? 0.93 : 0.12 };
    }
    if (model === WORKERS_AI_STT_MODEL && options?.websocket) return this.live(Number(inputs.sample_rate));
    throw new Error(`no such model: ${model}`);
  }

  /** Deepgram's live protocol: at CloseStream the final result for the speech in it (the quiet around it trimmed). */
  private live(rate: number): Response {
    return deepgramLiveSocket(async (samples) => {
      const frame = rate / 50;
      const on: number[] = [];
      for (let i = 0; i + frame <= samples.length; i += frame) if (isVoiced(samples.subarray(i, i + frame))) on.push(i);
      return on.length ? this.recognizer.transcribe({ samples: samples.subarray(on[0], on.at(-1)! + frame), rate: rate as 8000 }) : "";
    });
  }
}

/** The caller says SURE (its last word, then the clip's own quiet); how long on their clock until the reply's first audio. */
async function replyAfter(ai: FakeAi): Promise<{ ms: number; runId: number }> {
  const { runId, callee } = await fakeAiCall(ai);
  // The clip's last voiced frame: its quiet tail counts toward the pause.
  const frame = 160;
  let last = 0;
  for (let i = 0; i + frame <= SURE.samples.length; i += frame) if (isVoiced(SURE.samples.subarray(i, i + frame))) last = i + frame;
  callee.speak(SURE.samples);
  const lastWord = callee.clockMs - ((SURE.samples.length - last) / 8000) * 1000;
  const frames = callee.received.length;
  await listenUntil(callee, () => callee.received.length > frames);
  return { ms: callee.clockMs - lastWord, runId };
}

describe("smart-turn on the Nova-3 path (Workers AI)", () => {
  it("a 'complete' verdict at a short pause ends the turn well before end_of_turn_ms", async () => {
    const ai = new FakeAi(true);
    const { ms, runId } = await replyAfter(ai);
    console.log(`first audio ${ms} ms after the caller's last word (smart-turn: complete)`);
    expect(ms).toBeLessThan(500);
    expect(ai.verdicts.length).toBeGreaterThanOrEqual(1);
    // The model heard the turn as 16 kHz audio, at most its 8 s window.
    expect(ai.verdicts.every((v) => v.rate === 16000 && v.seconds > 0.5 && v.seconds <= 8)).toBe(true);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.turns.map((t) => [t.role, t.text]).slice(0, 2)).toEqual([
      ["agent", "Hi Ada!"],
      ["callee", "Sure, tell me more."],
    ]);
  });

  it("an 'incomplete' verdict keeps listening: the turn ends at the silence bound", async () => {
    const ai = new FakeAi(false);
    const { ms } = await replyAfter(ai);
    console.log(`first audio ${ms} ms after the caller's last word (smart-turn: incomplete)`);
    expect(ai.verdicts.length).toBeGreaterThanOrEqual(1);
    expect(ms).toBeGreaterThanOrEqual(700);
  });
});
