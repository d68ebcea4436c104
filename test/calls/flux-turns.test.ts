import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ClipSpeechToText } from "../../src/agent/clip-speech";
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import { WORKERS_AI_TTS_MODEL } from "../../src/agent/workers-ai-speech";
import { callSessionStub } from "../../src/calls/session/stub";
import { isVoiced } from "../../src/lib/audio/level";
import { fluxSocket } from "./flux-support";
import { fakeAiCall, listenLive, listenUntil, SEATS, SURE, transcriptWhen } from "./conversation-support";

const FLUX = "@cf/deepgram/flux";
/**
 * Flux ends the turn after this much quiet following speech (its end-of-turn model, stood in for by a wait; the
 * clips pause up to 240 ms between words).
 */
const FLUX_EOT_MS = 300;
/** Flux's medium confidence, stood in for by a shorter wait: it transcribes the stretch and (eager mode) says EagerEndOfTurn. */
const FLUX_EAGER_MS = 260;
/** The stand-in model's time to its first token. */
const MODEL_MS = 300;

type Msg = { role: string; content: string | null };

class FakeAi {
  readonly chats: Msg[][] = [];
  readonly spoken: string[] = [];
  readonly events: string[] = [];
  /** The Flux events sent before each model request of a turn (not the greeting's). */
  readonly eventsAtChat: string[][] = [];
  /**
   * `eager`: whether Flux sends eager events when asked for them (off: the baseline, Flux without eager mode);
   * `eotMs`: its quiet before EndOfTurn (Flux's eager event comes a few hundred ms before it); `modelMs`: the model's
   * time to its first token.
   */
  constructor(
    readonly eager = true,
    readonly eotMs = FLUX_EOT_MS,
    readonly modelMs = MODEL_MS,
  ) {}
  private readonly recognizer = new ClipSpeechToText([SURE, SEATS]);

  async run(model: string, inputs: Record<string, any>, options?: Record<string, unknown>): Promise<unknown> {
    if (model === WORKERS_AI_CHAT_MODEL) {
      const messages = structuredClone(inputs.messages) as Msg[];
      this.chats.push(messages);
      const last = String([...messages].reverse().find((m) => m.role === "user")?.content ?? "");
      if (last) this.eventsAtChat.push([...this.events]);
      await new Promise((r) => setTimeout(r, messages.length > 1 ? this.modelMs : 0));
      const response = !last ? "Hi Ada!" : last.includes("seats") ? "Twelve seats, noted." : "Great, thank you.";
      // Streamed a word at a time, as the model does: a reply's first clause can go to the voice before the rest.
      const words = response.split(/(?= )/);
      const events = words.map((w, i) => ({
        response: w,
        ...(i === words.length - 1 ? { usage: { prompt_tokens: 5, completion_tokens: words.length } } : {}),
      }));
      return new Response(`${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("")}data: [DONE]\n\n`).body!;
    }
    if (model === WORKERS_AI_TTS_MODEL) {
      this.spoken.push(inputs.text);
      return new Uint8Array(new Int16Array((16000 * 60 * inputs.text.length) / 1000).map((_, i) => Math.round(4000 * Math.sin(i / 6))).buffer);
    }
    if (model === FLUX && options?.websocket) return this.flux(Number(inputs.sample_rate), inputs.eager_eot_threshold !== undefined);
    throw new Error(`no such model: ${model}`);
  }

  /**
   * Flux's protocol: PCM in; each stretch of speech transcribed once the caller paused; EagerEndOfTurn (eager mode
   * only) after a short pause, TurnResumed if they speak again before EndOfTurn, EndOfTurn with the turn's words after
   * a longer one (the same words as the eager event, and no new eager event after a stretch without words); CloseStream
   * closes.
   */
  private flux(rate: number, asked: boolean): Response {
    const frame = rate / 50;
    const eager = asked && this.eager;
    let samples = new Int16Array(0);
    let [voiced, quietMs, segStart, transcribed, state] = [0, 0, 0, true, "idle" as "idle" | "speaking" | "eager" | "ended"];
    const words: string[] = [];
    // The speech in one stretch (the quiet around it trimmed), recognized among the callee's clips.
    const recognize = async (part: Int16Array) => {
      const on: number[] = [];
      for (let i = 0; i + frame <= part.length; i += frame) if (isVoiced(part.subarray(i, i + frame))) on.push(i);
      return on.length ? this.recognizer.transcribe({ samples: part.subarray(on[0], on.at(-1)! + frame), rate: rate as 8000 }) : "";
    };
    return fluxSocket(async (chunk, flux) => {
      const send = (event: string) => {
        this.events.push(event);
        flux.send(event, words.join(" "));
      };
      const joined = new Int16Array(samples.length + chunk.length);
      joined.set(samples);
      joined.set(chunk, samples.length);
      samples = joined;
      for (let i = 0; i + frame <= chunk.length && state !== "ended"; i += frame) {
        if (isVoiced(chunk.subarray(i, i + frame))) {
          if (state === "eager") send("TurnResumed");
          [voiced, quietMs, transcribed, state] = [voiced + 1, 0, false, "speaking"];
          continue;
        }
        quietMs += 20;
        if (state === "idle" || voiced < 10) continue;
        const at = samples.length - chunk.length + i;
        if (!transcribed && quietMs >= FLUX_EAGER_MS) {
          // A stretch with no words in it (a cough) adds none, and gives nothing new to be eager about.
          const heard = await recognize(samples.subarray(segStart, at));
          if (heard) words.push(heard);
          [segStart, transcribed] = [at, true];
          if (eager && heard) {
            state = "eager";
            send("EagerEndOfTurn");
          }
        }
        if (transcribed && quietMs >= this.eotMs) {
          state = "ended";
          send("EndOfTurn");
        }
      }
    });
  }
}

/** The call, with the session on the fake binding, up to the greeting heard and a little quiet. */
const fluxCall = (ai: FakeAi, stt: Record<string, unknown> = {}) =>
  fakeAiCall(ai, { workflow_configurations: { voice_agent: { stt: { provider: "workers-ai", model: FLUX, ...stt } } } });

/** The caller says SURE; the time (on their clock, kept level with the wall clock) until the reply's first audio. */
async function replyDelay(ai: FakeAi, stt: Record<string, unknown> = {}): Promise<number> {
  const { callee } = await fluxCall(ai, stt);
  callee.speak(SURE.samples);
  const spokeUntil = callee.clockMs;
  const frames = callee.received.length;
  await listenLive(callee, () => callee.received.length > frames, 5000);
  return callee.clockMs - spokeUntil;
}

/** A cough: 240 ms of voiced sound (8 kHz) that is no word, fading. */
const COUGH = Int16Array.from({ length: 1920 }, (_, i) => Math.round(6000 * (1 - i / 2400) * Math.sin((2 * Math.PI * 300 * i) / 8000)));

const lastUser = (m: Msg[]) => String([...m].reverse().find((x) => x.role === "user")?.content ?? "");

describe("Flux's turn events on Workers AI", () => {
  it("EndOfTurn ends the caller's turn without waiting for the silence bound: the reply starts well under 700 ms after their words", async () => {
    const ai = new FakeAi(false);
    const { runId, callee } = await fluxCall(ai);
    callee.speak(SURE.samples);
    const spokeUntil = callee.clockMs;
    const frames = callee.received.length;
    await listenLive(callee, () => callee.received.length > frames, 5000);
    expect(callee.clockMs - spokeUntil, "the reply came").toBeGreaterThan(0);
    expect(ai.chats.map(lastUser)).toContain("Sure, tell me more.");
    // The reply goes into the transcript, with its timing, once it has played.
    const turns = await transcriptWhen(runId, callee, (t) => t.length >= 3);
    expect(turns.map((t) => [t.role, t.text]).slice(0, 3)).toEqual([
      ["agent", "Hi Ada!"],
      ["callee", "Sure, tell me more."],
      ["agent", expect.any(String)],
    ]);
    // The turn ended on Flux's event, before the 700 ms silence bound: read on the session's audio clock, from the
    // caller's last word (the clip's own trailing quiet included). The caller's clock, which also holds the model's
    // and the voice's time, read 900 ms beside a CPU hog (2026-11-29).
    const endOfTurn = (turns[2] as { timing?: { end_of_turn_ms?: number } }).timing?.end_of_turn_ms;
    expect(endOfTurn).toBeLessThan(700);
  });

  it("EagerEndOfTurn starts the model ahead: asked on the eager words before EndOfTurn, its reply is the one played", async () => {
    // Without: the agent turns eager mode off (`eager_eot_threshold: null`), so Flux is not asked for eager events.
    const plain = new FakeAi(true, 560);
    const without = await replyDelay(plain, { eager_eot_threshold: null });
    const ai = new FakeAi(true, 560);
    const withEager = await replyDelay(ai);
    expect(ai.events).toEqual(["EagerEndOfTurn", "EndOfTurn"]);
    expect(plain.events).toEqual(["EndOfTurn"]);
    // The model was asked at the eager event, before Flux ended the turn; without eager mode, only once it had. This
    // order, not a time, is the assertion: the gain in time (the model's 300 ms begun ahead) is the caller's clock's,
    // which a loaded machine's late timers and caught-up frames can swallow (bench/voice measures it at 50 calls).
    expect(ai.eventsAtChat).toEqual([["EagerEndOfTurn"]]);
    expect(plain.eventsAtChat).toEqual([["EndOfTurn"]]);
    // One model request for the turn either way: the speculative one was used, not repeated.
    expect(ai.chats.map(lastUser)).toEqual(["Sure, tell me more."]);
    // Its first clause was voiced ahead and that audio is what the reply played: the voice was asked once per piece.
    expect(ai.spoken).toEqual(["Hi Ada!", "Great,", "thank you."]);
    console.log(`first audio after the caller's words: ${withEager} ms with EagerEndOfTurn, ${without} ms without`);
  });

  it("a speculative reply cancelled by TurnResumed is never heard and never in the history", async () => {
    // The model answers in 100 ms, well before EndOfTurn, so the speculative reply's first clause is voiced ahead.
    const ai = new FakeAi(true, 600, 100);
    const { runId, callee } = await fluxCall(ai);
    const greeting = callee.received.length;
    callee.speak(SURE.samples);
    // The clip's own 320 ms of quiet: past Flux's eager pause (260 ms), short of its end of turn (600 ms). The model
    // starts on "Sure, tell me more." and its first clause goes to the voice; the caller sends nothing more until that
    // clause is voiced, so Flux's quiet stays 320 ms however long a busy machine takes (on the wall clock, while
    // silence went on, it reached 600 ms: EndOfTurn, not TurnResumed). Then they go on.
    for (const until = Date.now() + 5000; !ai.spoken.includes("Great,") && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
    const beforeResuming = callee.received.length;
    callee.speak(SEATS.samples);
    await listenLive(callee, () => ai.spoken.includes("Twelve seats, noted."), 5000);
    await listenUntil(callee, () => callee.played.length >= 2);
    expect(ai.events).toEqual(["EagerEndOfTurn", "TurnResumed", "EagerEndOfTurn", "EndOfTurn"]);
    // The model was asked on the eager words, then on the whole turn.
    expect(ai.chats.map(lastUser)).toEqual(["Sure, tell me more.", "Sure, tell me more. We need twelve seats."]);
    // Its first clause was voiced ahead, but none of that audio reached the caller: what they heard after the greeting
    // is exactly the confirmed reply (60 ms of audio a character); no request after carries it.
    expect(ai.spoken).toEqual(["Hi Ada!", "Great,", "Twelve seats, noted."]);
    expect(beforeResuming).toBe(greeting);
    expect(callee.received.slice(greeting).reduce((n, p) => n + p.length / 8, 0)).toBe(60 * "Twelve seats, noted.".length);
    expect(ai.chats[1].filter((m) => m.role === "assistant").map((m) => m.content)).toEqual(["Hi Ada!"]);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.turns.map((t) => [t.role, t.text])).toEqual([
      ["agent", "Hi Ada!"],
      ["callee", "Sure, tell me more. We need twelve seats."],
      ["agent", "Twelve seats, noted."],
    ]);
  });

  it("TurnResumed drops the speculative reply even when the turn ends with the same words: the reply asks the model again", async () => {
    // The caller says SURE, pauses long enough for EagerEndOfTurn (the model answers in 100 ms and the reply's first
    // clause is voiced ahead), then coughs: Flux says TurnResumed, hears no words in the cough and ends the turn with
    // the eager words. Only the cancellation on TurnResumed keeps the reply from being the one started before it.
    const ai = new FakeAi(true, 600, 100);
    const { runId, callee } = await fluxCall(ai);
    const greeting = callee.received.length;
    // The clip ends with 320 ms of its own quiet: past Flux's eager pause (260 ms), short of its end of turn (600 ms).
    // No more audio is sent until the eager reply's first clause is voiced, so however slow the machine, Flux's
    // frame-counted quiet cannot reach EndOfTurn before the cough.
    callee.speak(SURE.samples);
    for (const until = Date.now() + 5000; !ai.spoken.includes("Great,") && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
    expect(ai.events).toEqual(["EagerEndOfTurn"]);
    expect(ai.spoken).toContain("Great,");
    expect(callee.received.length).toBe(greeting);
    callee.speak(COUGH);
    await listenLive(callee, () => ai.spoken.includes("thank you."), 5000);
    // Played: the greeting, then the reply's two pieces.
    await listenUntil(callee, () => callee.played.length >= 3);
    expect(ai.events).toEqual(["EagerEndOfTurn", "TurnResumed", "EndOfTurn"]);
    // The same request twice: the eager one, dropped when the caller went on, and the turn's own.
    expect(ai.chats.map(lastUser)).toEqual(["Sure, tell me more.", "Sure, tell me more."]);
    // The first clause voiced ahead was dropped with it and voiced again for the reply; the caller heard the reply once.
    expect(ai.spoken).toEqual(["Hi Ada!", "Great,", "Great,", "thank you."]);
    expect(callee.received.slice(greeting).reduce((n, p) => n + p.length / 8, 0)).toBe(60 * "Great,thank you.".length);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.turns.map((t) => [t.role, t.text])).toEqual([
      ["agent", "Hi Ada!"],
      ["callee", "Sure, tell me more."],
      ["agent", "Great, thank you."],
    ]);
  });
});
