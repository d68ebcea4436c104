// The end of the caller's turn on the speech engines an agent brings its own key for (issue 42): Deepgram's own API
// on Flux (v2 listen, its TurnInfo events, the agent's thresholds), Deepgram's Nova (v1 live, interim results) and
// ElevenLabs' Scribe with smart-turn on the deployment's AI binding at a pause. Deepgram and ElevenLabs are the
// stand-in in Node (test/calls/speech-standin.global.ts, Flux in flux-standin.ts: it checks the handshake against
// Deepgram's documented parameters); Workers AI (the model, the voice, smart-turn) is faked at the binding.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DeepgramSpeechToText } from "../../src/agent/deepgram-speech";
import { turnDetection } from "../../src/agent/engines";
import { ElevenLabsSpeechToText } from "../../src/agent/elevenlabs-speech";
import type { TurnEvent } from "../../src/agent/speech";
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import { WORKERS_AI_TTS_MODEL, WORKERS_AI_TURN_MODEL } from "../../src/agent/workers-ai-speech";
import { callSessionStub } from "../../src/calls/session/stub";
import { isVoiced } from "../../src/lib/audio/level";
import { call } from "../helpers";
import { DEFINITION, listenLive, listenUntil, SEATS, SURE } from "./conversation-support";
import { BASE, key, keyedCall as keyedCallOn, script, sent } from "./keyed-speech-support";
import { setup } from "./support";

/** 20 ms frames at 8 kHz: voiced (a steady level over the agent's gate) or quiet. */
const voiced = (ms: number) => Array.from({ length: ms / 20 }, () => new Int16Array(160).fill(3000));
const quiet = (ms: number) => Array.from({ length: ms / 20 }, () => new Int16Array(160));
const tick = () => new Promise((r) => setTimeout(r, 5));

describe("Deepgram's own API on Flux (v2 listen)", () => {
  it("opens v2 listen with flux-general-en, the agent's end-of-turn settings as Deepgram documents them, and Token auth", async () => {
    const k = key();
    await script(k, ["Sure, tell me more."]);
    const stt = new DeepgramSpeechToText({ apiKey: k, baseUrl: BASE, flux: { eotThreshold: 0.8, eagerEotThreshold: 0.5, eotTimeoutMs: 1500 } });
    // Flux says when the turn ends: no smart-turn beside it.
    expect(stt.endOfTurn).toBeUndefined();
    const stream = stt.open(8000);
    const events: [TurnEvent, string | undefined][] = [];
    stream.onTurn = (e, words) => events.push([e, words]);
    const heard: string[] = [];
    for (const f of [...voiced(400), ...quiet(400)]) {
      stream.push(f);
      await tick();
      heard.push(stream.words?.() ?? "");
    }
    await sent(k, (l) => l[0]?.events.includes("EndOfTurn"));
    // Eager at 260 ms of quiet, the end at 300: the words with each (as Deepgram documents, the same words).
    await new Promise((r) => setTimeout(r, 100));
    expect(events).toEqual([
      ["eager", "Sure, tell me more."],
      ["end", "Sure, tell me more."],
    ]);
    // The words were known while the turn went on (Flux's updates), before any end.
    expect(heard.indexOf("Sure, tell me more.")).toBeLessThan(20);
    expect(await stream.finish()).toBe("Sure, tell me more.");
    const [ws] = await sent(k, (l) => l[0]?.closed !== null);
    expect(ws.path).toBe("/v2/listen");
    expect(ws.headers.authorization).toBe(`Token ${k}`);
    expect(ws.query).toEqual({
      model: "flux-general-en",
      encoding: "linear16",
      sample_rate: "8000",
      eot_threshold: "0.8",
      eager_eot_threshold: "0.5",
      eot_timeout_ms: "1500",
    });
    // Flux takes CloseStream alone (Finalize is the v1 protocol's).
    expect(ws.controls).toEqual(["CloseStream"]);
    expect(ws.events.filter((e: string) => e !== "Update")).toEqual(["StartOfTurn", "EagerEndOfTurn", "EndOfTurn"]);
  });

  it("unset, eager mode at 0.4 and Deepgram's own defaults; eager null asks for none; an out-of-range query is Deepgram's 400", async () => {
    const [a, b, c] = [key(), key(), key()];
    for (const [k, flux] of [
      [a, {}],
      [b, { eagerEotThreshold: null }],
    ] as const) {
      const stream = new DeepgramSpeechToText({ apiKey: k, baseUrl: BASE, flux }).open(16000);
      stream.push(new Int16Array(320));
      expect(await stream.finish()).toBe("");
    }
    expect((await sent(a))[0].query).toEqual({ model: "flux-general-en", encoding: "linear16", sample_rate: "16000", eager_eot_threshold: "0.4" });
    expect((await sent(b))[0].query).toEqual({ model: "flux-general-en", encoding: "linear16", sample_rate: "16000" });
    // The stand-in refuses what Deepgram documents it refuses (eot_timeout_ms is 500-10000).
    const bad = new DeepgramSpeechToText({ apiKey: c, baseUrl: BASE, flux: { eotTimeoutMs: 100 } }).open(8000);
    await expect(bad.finish()).rejects.toThrow(/^Deepgram Flux speech-to-text answered HTTP 400: eot_timeout_ms must be 500-10000/);
  });

  it("the voice coming back after EagerEndOfTurn is TurnResumed; the turn's end then carries all its words", async () => {
    const k = key();
    await script(k, ["Sure, tell me more.", "We need twelve seats."]);
    const stream = new DeepgramSpeechToText({ apiKey: k, baseUrl: BASE }).open(8000);
    const events: [TurnEvent, string | undefined][] = [];
    stream.onTurn = (e, words) => events.push([e, words]);
    for (const f of [...voiced(400), ...quiet(280), ...voiced(400), ...quiet(400)]) {
      stream.push(f);
      await tick();
    }
    await sent(k, (l) => l[0]?.events.includes("EndOfTurn"));
    await new Promise((r) => setTimeout(r, 100));
    expect(events.map(([e]) => e)).toEqual(["eager", "resumed", "eager", "end"]);
    expect(events.at(-1)?.[1]).toBe("Sure, tell me more. We need twelve seats.");
    expect(await stream.finish()).toBe("Sure, tell me more. We need twelve seats.");
  });

  it("a whole utterance (after a live turn failed) goes to Nova's pre-recorded endpoint: Flux only streams", async () => {
    const k = key();
    await new DeepgramSpeechToText({ apiKey: k, baseUrl: BASE }).transcribe({ samples: new Int16Array(800).fill(5), rate: 8000 });
    const [req] = await sent(k);
    expect([req.path, req.query.model]).toEqual(["/v1/listen", "nova-3"]);
  });
});

describe("Deepgram's Nova and ElevenLabs: words while the caller speaks, smart-turn beside", () => {
  it("Nova live asks for interim results: the words so far are known before the turn ends, and never become its text", async () => {
    const k = key();
    const turnModel = async () => true;
    const stt = new DeepgramSpeechToText({ apiKey: k, baseUrl: BASE, model: "nova-3", turnModel });
    expect(stt.endOfTurn).toBe(turnModel);
    const stream = stt.open(8000);
    for (const f of voiced(200)) stream.push(f);
    await sent(k, (l) => l[0]?.frames.length === 10);
    for (let i = 0; i < 50 && stream.words?.() !== "interim guess"; i++) await tick();
    // The stand-in's interim result (it revises it later): the words a barge-in is decided on.
    expect(stream.words?.()).toBe("interim guess");
    const text = await stream.finish();
    expect(text).not.toContain("interim");
    expect((await sent(k))[0].query.interim_results).toBe("true");
  });

  it("ElevenLabs' Scribe takes smart-turn where the deployment gives it (none without the binding)", () => {
    const turnModel = async () => false;
    expect(new ElevenLabsSpeechToText({ apiKey: "k", turnModel }).endOfTurn).toBe(turnModel);
    expect(new ElevenLabsSpeechToText({ apiKey: "k" }).endOfTurn).toBeUndefined();
  });
});

type Msg = { role: string; content: string | null };

/** Workers AI at the binding: the model (first token after `modelMs`, a word at a time), the voice, smart-turn. */
class FakeAi {
  readonly chats: Msg[][] = [];
  readonly spoken: string[] = [];
  turnAsked = 0;
  /** When (Date.now()) each model request with the caller's words came, and each smart-turn verdict was given. */
  readonly askedAt: number[] = [];
  readonly verdictAt: number[] = [];
  /** The order the requests came in: "model" (with the caller's words) and "turn" (smart-turn). */
  readonly order: string[] = [];
  constructor(
    private readonly verdict: boolean | "fails" = true,
    private readonly modelMs = 300,
    private readonly turnMs = 0,
  ) {}

  async run(model: string, inputs: Record<string, any>): Promise<unknown> {
    if (model === WORKERS_AI_CHAT_MODEL) {
      const messages = structuredClone(inputs.messages) as Msg[];
      this.chats.push(messages);
      const last = String([...messages].reverse().find((m) => m.role === "user")?.content ?? "");
      if (last) this.askedAt.push(Date.now());
      if (last) this.order.push("model");
      await new Promise((r) => setTimeout(r, messages.some((m) => m.role === "user") ? this.modelMs : 0));
      const response = !last ? "Hi Ada!" : last.includes("seats") ? "Twelve seats, noted." : "Great, thank you.";
      const words = response.split(/(?= )/);
      const events = words.map((w, i) => ({ response: w, ...(i === words.length - 1 ? { usage: { prompt_tokens: 5, completion_tokens: 3 } } : {}) }));
      return new Response(`${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("")}data: [DONE]\n\n`).body!;
    }
    if (model === WORKERS_AI_TTS_MODEL) {
      this.spoken.push(inputs.text);
      return new Uint8Array(new Int16Array((16000 * 60 * inputs.text.length) / 1000).map((_, i) => Math.round(4000 * Math.sin(i / 6))).buffer);
    }
    if (model === WORKERS_AI_TURN_MODEL) {
      this.turnAsked++;
      this.order.push("turn");
      await new Promise((r) => setTimeout(r, this.turnMs));
      this.verdictAt.push(Date.now());
      if (this.verdict === "fails") throw new Error("3040: Capacity temporarily exceeded");
      return { is_complete: this.verdict, probability: this.verdict ? 0.93 : 0.1 };
    }
    throw new Error(`no such model: ${model}`);
  }
}

/**
 * A 2.5 s silence bound: a reply under 1.5 s came from the engine's turn detection, not the silence (the model takes
 * 300 ms here, and the machine may be loaded).
 */
const BOUND_MS = 2500;
const FAST_MS = 1500;

/** A seats call on `stt` with the 2.5 s silence bound. */
const keyedCall = (ai: FakeAi, stt: Record<string, unknown>) => keyedCallOn(ai, stt, { end_of_turn_ms: BOUND_MS });

/** The caller says SURE; ms on their clock (level with the wall clock) from its last voiced frame to the reply's first audio. */
async function replyAfterSure(callee: Awaited<ReturnType<typeof keyedCall>>["callee"]): Promise<number> {
  let last = 0;
  for (let i = 0; i + 160 <= SURE.samples.length; i += 160) if (isVoiced(SURE.samples.subarray(i, i + 160))) last = i + 160;
  callee.speak(SURE.samples);
  const lastWord = callee.clockMs - ((SURE.samples.length - last) / 8000) * 1000;
  const frames = callee.received.length;
  await listenLive(callee, () => callee.received.length > frames, 6000);
  return callee.clockMs - lastWord;
}

const lastUser = (m: Msg[]) => String([...m].reverse().find((x) => x.role === "user")?.content ?? "");

describe("a call on the agent's own keys: the turn ends on the engine's word, not the silence bound", () => {
  it("Deepgram Flux: EndOfTurn ends the turn; the reply starts far inside the 2.5 s silence bound", async () => {
    const ai = new FakeAi();
    const k = key("flux");
    await script(k, ["Sure, tell me more."]);
    const { runId, callee } = await keyedCall(ai, { provider: "deepgram", api_key: k, eot_threshold: 0.8 });
    const ms = await replyAfterSure(callee);
    console.log(`Deepgram Flux (own key): first audio ${ms} ms after the caller's last word`);
    expect(ms).toBeLessThan(FAST_MS);
    const [ws] = await sent(k);
    expect(ws.path).toBe("/v2/listen");
    expect(ws.query).toMatchObject({ model: "flux-general-en", sample_rate: "8000", eot_threshold: "0.8", eager_eot_threshold: "0.4" });
    // No smart-turn on Flux.
    expect(ai.turnAsked).toBe(0);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.turns.map((t) => [t.role, t.text]).slice(0, 2)).toEqual([
      ["agent", "Hi Ada!"],
      ["callee", "Sure, tell me more."],
    ]);
  });

  it("Deepgram Flux: a speculative reply cancelled by TurnResumed is never heard and never in the history", async () => {
    // The model answers in 100 ms, well before EndOfTurn (1 s of quiet), so the speculative clause is voiced ahead.
    const ai = new FakeAi(true, 100);
    const k = key("flux");
    await script(k, ["Sure, tell me more.", "We need twelve seats."], { eagerMs: 260, eotMs: 1000 });
    const { runId, callee } = await keyedCall(ai, { provider: "deepgram", api_key: k });
    const greeting = callee.received.length;
    callee.speak(SURE.samples);
    await listenLive(callee, () => ai.spoken.includes("Great,"), 4000);
    const beforeResuming = callee.received.length;
    callee.speak(SEATS.samples);
    await listenLive(callee, () => ai.spoken.includes("Twelve seats, noted."), 6000);
    await listenUntil(callee, () => callee.played.length >= 2);
    const [ws] = await sent(k);
    expect(ws.events.filter((e: string) => !["StartOfTurn", "Update"].includes(e))).toEqual(["EagerEndOfTurn", "TurnResumed", "EagerEndOfTurn", "EndOfTurn"]);
    expect(ai.chats.filter((m) => m.some((x) => x.role === "user")).map(lastUser)).toEqual([
      "Sure, tell me more.",
      "Sure, tell me more. We need twelve seats.",
    ]);
    // Voiced ahead, but none of it reached the caller: after the greeting they heard exactly the confirmed reply.
    expect(ai.spoken).toEqual(["Hi Ada!", "Great,", "Twelve seats, noted."]);
    expect(beforeResuming).toBe(greeting);
    expect(callee.received.slice(greeting).reduce((n, p) => n + p.length / 8, 0)).toBe(60 * "Twelve seats, noted.".length);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.turns.map((t) => [t.role, t.text])).toEqual([
      ["agent", "Hi Ada!"],
      ["callee", "Sure, tell me more. We need twelve seats."],
      ["agent", "Twelve seats, noted."],
    ]);
  });

  it("Deepgram Nova: at a short pause, before smart-turn is asked, the reply's model request starts on the interim words, and is used", async () => {
    // smart-turn takes 400 ms to answer: the model was already asked before its verdict came.
    const ai = new FakeAi(true, 300, 400);
    const k = key();
    await script(k, ["Sure, tell me more."]);
    const { runId, callee } = await keyedCall(ai, { provider: "deepgram", model: "nova-3", api_key: k });
    // 800 ms of voice without a pause, in real time (the interim words come back from the socket while it lasts).
    const start = Date.now();
    for (let i = 0; i < 40; i++) {
      const wait = start + i * 20 - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      callee.speak(Int16Array.from({ length: 160 }, (_, j) => Math.round(7000 * Math.sin((2 * Math.PI * 200 * j) / 8000))));
    }
    const frames = callee.received.length;
    await listenLive(callee, () => callee.received.length > frames, 6000);
    // One request on the caller's words (the one started ahead, not repeated), before the verdict that ended the turn.
    expect(ai.verdictAt).toHaveLength(1);
    expect(ai.askedAt).toHaveLength(1);
    expect(ai.askedAt[0]).toBeLessThan(ai.verdictAt[0]);
    // Started at the shorter pause (REPLY_AHEAD_PAUSE_MS), before smart-turn was asked at its own.
    expect(ai.order).toEqual(["model", "turn"]);
    expect(ai.chats.filter((m) => m.some((x) => x.role === "user")).map(lastUser)).toEqual(["Sure, tell me more."]);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.turns.map((t) => [t.role, t.text]).slice(0, 2)).toEqual([
      ["agent", "Hi Ada!"],
      ["callee", "Sure, tell me more."],
    ]);
    expect(ai.spoken).toContain("Great,");
  });

  for (const [name, stt] of [
    ["Deepgram Nova (own key)", { provider: "deepgram", model: "nova-3" }],
    ["ElevenLabs Scribe (own key)", { provider: "elevenlabs" }],
  ] as const) {
    it(`${name}: smart-turn's 'complete' at a short pause ends the turn; its failure leaves the silence bound`, async () => {
      const ai = new FakeAi(true);
      const { callee } = await keyedCall(ai, { ...stt, api_key: key() });
      const ms = await replyAfterSure(callee);
      const failing = new FakeAi("fails");
      const slow = await replyAfterSure((await keyedCall(failing, { ...stt, api_key: key() })).callee);
      console.log(`${name}: first audio ${ms} ms after the caller's last word with smart-turn, ${slow} ms when it fails`);
      expect(ai.turnAsked).toBeGreaterThanOrEqual(1);
      expect(ms).toBeLessThan(FAST_MS);
      expect(failing.turnAsked).toBeGreaterThanOrEqual(1);
      expect(slow).toBeGreaterThanOrEqual(BOUND_MS);
    });
  }
});

describe("the path each agent's turns take, on its latency endpoint", () => {
  it("flux, smart-turn or silence, from the agent's speech engine; the silence bound alone without an AI binding", async () => {
    const s = await setup("twilio");
    const cases: [unknown, string][] = [
      [undefined, "smart-turn"], // Workers AI's Nova-3 by default
      [{ provider: "workers-ai", model: "@cf/deepgram/flux" }, "flux"],
      [{ provider: "deepgram", api_key: "k" }, "flux"],
      [{ provider: "deepgram", api_key: "k", model: "flux-general-multi" }, "flux"],
      [{ provider: "deepgram", api_key: "k", model: "nova-3" }, "smart-turn"],
      [{ provider: "elevenlabs", api_key: "k" }, "smart-turn"],
    ];
    for (const [stt, expected] of cases) {
      const voice_agent = stt ? { stt } : {};
      const wf = await call("POST", "/api/v1/workflow/create", {
        key: s.org.key,
        body: { name: "turns", workflow_definition: DEFINITION, workflow_configurations: { voice_agent } },
      });
      expect(wf.status, wf.text).toBe(200);
      const latency = await call("GET", `/api/v1/workflow/${wf.json.id}/latency`, { key: s.org.key });
      expect(latency.status, latency.text).toBe(200);
      expect([stt, latency.json.turn_detection]).toEqual([stt, expected]);
    }
    // The scripted engines of local development, and a deployment without the binding: the silence bound decides.
    expect(turnDetection({ voice_agent: { stt: { provider: "scripted", clips: [] } } }, true)).toBe("silence");
    expect(turnDetection({ voice_agent: { stt: { provider: "elevenlabs" } } }, false)).toBe("silence");
    expect(turnDetection({ voice_agent: { stt: { provider: "deepgram" } } }, false)).toBe("flux");
  });
});
