// Failover inside the turn: stand-in engines that rate-limit, fail, hang, or fail a few times then recover. The
// request moves to the next engine before anything of the reply was emitted, never after; an engine that keeps
// failing is skipped for its cool-down (the clock moved, not waited for); the call's log says what served and why.
import { afterEach, describe, expect, it } from "vitest";
import type { ChatEvent, ChatModel, ChatRequest } from "../../src/agent/chat";
import { ModelError } from "../../src/agent/chat-stream";
import { EngineHealth, type FailoverContext, FailoverLog, failoverReason, type Slot, workersAiStatus } from "../../src/agent/failover";
import { FailoverModel } from "../../src/agent/failover-model";
import { FailoverSpeechToText, FailoverTextToSpeech } from "../../src/agent/failover-speech";
import { IdlePolicy } from "../../src/agent/idle-policy";
import { type Speech, SpeechError, type SpeechStream, type SpeechToText, type TextToSpeech } from "../../src/agent/speech";
import { DEFAULT_TURN_SETTINGS } from "../../src/agent/turn-settings";
import { WorkersAiModel } from "../../src/agent/workers-ai-model";
import { clock } from "../../src/lib/clock";

const REQUEST: ChatRequest = { messages: [{ role: "user", content: "Hello?" }], tools: [] };

type Behaviour = "ok" | "429" | "500" | "400" | "401" | "unreachable" | "hang" | "mid-stream";

/** A model that behaves as told on each call in turn (the last behaviour repeats), counting its calls. */
class StandIn implements ChatModel {
  calls = 0;
  aborted = 0;
  constructor(
    readonly name: string,
    private readonly script: Behaviour[],
  ) {}
  async *stream(_r: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
    const b = this.script[Math.min(this.calls++, this.script.length - 1)];
    if (b === "429" || b === "500" || b === "400" || b === "401") throw new ModelError(`${this.name} answered HTTP ${b}`, Number(b));
    if (b === "unreachable") throw new ModelError(`${this.name} could not be reached`, null);
    if (b === "hang") {
      await new Promise((_, reject) =>
        signal?.addEventListener("abort", () => {
          this.aborted++;
          reject(signal.reason);
        }),
      );
    }
    yield { type: "text", text: `${this.name} says hi.` };
    if (b === "mid-stream") throw new ModelError(`${this.name} broke mid-reply`, 500);
    yield { type: "text", text: " Bye." };
  }
}

const text = async (it: AsyncIterable<ChatEvent>) => {
  let out = "";
  for await (const ev of it) if (ev.type === "text") out += ev.text;
  return out;
};

const SETTINGS = { firstByteMs: 100, coolDownAfter: 2, coolDownMs: 30_000 };
const context = (): FailoverContext => ({ settings: SETTINGS, health: new EngineHealth(), log: new FailoverLog() });
const slots = <E extends { name: string }>(...engines: E[]): Slot<E>[] => engines.map((e) => ({ id: e.name, health: e.name, engine: e }));

afterEach(() => clock.set(null));

describe("failoverReason", () => {
  it("fails over on 429, 408, 5xx, unreachable, time-outs and an engine's own 401/403/404; not on 400, 413, 422 nor the caller's abort", () => {
    expect(failoverReason(new ModelError("x", 429))).toBe("429");
    expect(failoverReason(new SpeechError("x", 503))).toBe("503");
    expect(failoverReason(new SpeechError("x", 408))).toBe("408");
    expect(failoverReason(new ModelError("could not be reached", null))).toBe("unreachable");
    expect(failoverReason(new SpeechError("Deepgram timed out after 10000 ms", null))).toBe("timeout");
    expect(failoverReason(new ModelError("bad key", 401))).toBe("401");
    for (const s of [400, 413, 422]) expect(failoverReason(new ModelError("x", s))).toBeNull();
    const aborted = new AbortController();
    aborted.abort();
    expect(failoverReason(new ModelError("x", 429), aborted.signal)).toBeNull();
  });

  it("reads Workers AI's codes in the binding's error text", async () => {
    expect(workersAiStatus(new Error("InferenceUpstreamError: 3040: Capacity temporarily exceeded, please try again."))).toBe(429);
    expect(workersAiStatus(new Error("AiError: 3036: Account limited"))).toBe(429);
    expect(workersAiStatus(new Error("5007: No such model @cf/nope or task"))).toBe(400);
    expect(workersAiStatus(new Error("network connection lost"))).toBeNull();
    const ai = { run: async () => Promise.reject(new Error("3040: Capacity temporarily exceeded")) };
    const err = await text(new WorkersAiModel(ai).stream(REQUEST)).catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err.status).toBe(429);
  });
});

describe("FailoverModel", () => {
  it("a primary that answers 429 hands the same request to the fallback; the log names both", async () => {
    const [a, b] = [new StandIn("a", ["429"]), new StandIn("b", ["ok"])];
    const ctx = context();
    expect(await text(new FailoverModel(slots(a, b), ctx).stream(REQUEST))).toBe("b says hi. Bye.");
    expect([a.calls, b.calls]).toEqual([1, 1]);
    expect(ctx.log.take()).toEqual({ llm_engine: "b", failovers: "llm a → b (429)", failover_count: 1 });
    expect(ctx.log.take()).toBeNull();
  });

  it("goes down the chain past a 500 and an unreachable engine", async () => {
    const chain = [new StandIn("a", ["500"]), new StandIn("b", ["unreachable"]), new StandIn("c", ["ok"])];
    const ctx = context();
    expect(await text(new FailoverModel(slots(...chain), ctx).stream(REQUEST))).toBe("c says hi. Bye.");
    expect(ctx.log.take()).toMatchObject({ llm_engine: "c", failovers: "llm a → b (500); llm b → c (unreachable)", failover_count: 2 });
  });

  it("an engine that says nothing within the first-byte bound is aborted and the fallback answers", async () => {
    const [a, b] = [new StandIn("a", ["hang"]), new StandIn("b", ["ok"])];
    const ctx = context();
    expect(await text(new FailoverModel(slots(a, b), ctx).stream(REQUEST))).toBe("b says hi. Bye.");
    expect(a.aborted).toBe(1);
    expect(ctx.log.take()?.failovers).toBe("llm a → b (timeout)");
  });

  it("the last engine has no first-byte bound: a slow answer is waited for (only its own time limit applies)", async () => {
    const slow: ChatModel & { name: string } = {
      name: "slow",
      async *stream() {
        await new Promise((r) => setTimeout(r, SETTINGS.firstByteMs * 3));
        yield { type: "text", text: "Late but here." };
      },
    };
    const ctx = context();
    expect(await text(new FailoverModel(slots(new StandIn("a", ["500"]), slow), ctx).stream(REQUEST))).toBe("Late but here.");
    expect(ctx.log.take()).toEqual({ llm_engine: "slow", failovers: "llm a → slow (500)", failover_count: 1 });
  });

  it("never fails over once the reply started: a mid-stream failure is the turn's error", async () => {
    const [a, b] = [new StandIn("a", ["mid-stream"]), new StandIn("b", ["ok"])];
    const ctx = context();
    const got: string[] = [];
    const err = await (async () => {
      for await (const ev of new FailoverModel(slots(a, b), ctx).stream(REQUEST)) if (ev.type === "text") got.push(ev.text);
    })().catch((e) => e);
    expect(got).toEqual(["a says hi."]);
    expect(err).toMatchObject({ message: "a broke mid-reply" });
    expect(b.calls).toBe(0);
    expect(ctx.log.take()).toEqual({ llm_engine: "a" });
  });

  it("a request the engine could not read (400) is not failed over; the last engine's failure is thrown", async () => {
    const ctx = context();
    const bad = new StandIn("b", ["ok"]);
    await expect(text(new FailoverModel(slots(new StandIn("a", ["400"]), bad), ctx).stream(REQUEST))).rejects.toThrow("HTTP 400");
    expect(bad.calls).toBe(0);
    await expect(text(new FailoverModel(slots(new StandIn("x", ["429"]), new StandIn("y", ["500"])), ctx).stream(REQUEST))).rejects.toThrow("HTTP 500");
    expect(ctx.log.take()?.failovers).toBe("llm x → y (429); llm y → none (500)");
  });

  it("the caller's abort is not a failover", async () => {
    const ctx = context();
    const stop = new AbortController();
    const a = new StandIn("a", ["hang"]);
    const b = new StandIn("b", ["ok"]);
    const pending = text(new FailoverModel(slots(a, b), ctx).stream(REQUEST, stop.signal)).catch((e) => e);
    stop.abort(new Error("barge-in"));
    expect(await pending).toMatchObject({ message: "barge-in" });
    expect(b.calls).toBe(0);
    expect(ctx.log.take()).toBeNull();
  });

  it("after N consecutive failures an engine is skipped for its cool-down, then tried again; a success resets the count", async () => {
    clock.set(1_000_000);
    const a = new StandIn("a", ["429", "ok", "429", "429", "ok"]);
    const b = new StandIn("b", ["ok"]);
    const ctx = context();
    const model = new FailoverModel(slots(a, b), ctx);
    await text(model.stream(REQUEST)); // a: 429 (1)
    expect(await text(model.stream(REQUEST))).toBe("a says hi. Bye."); // a recovered: the count starts over
    await text(model.stream(REQUEST)); // a: 429 (1)
    await text(model.stream(REQUEST)); // a: 429 (2): cooling down
    expect(a.calls).toBe(4);
    expect(ctx.health.cooling("a")).toBe(true);
    ctx.log.take();
    expect(await text(model.stream(REQUEST))).toBe("b says hi. Bye.");
    expect(a.calls).toBe(4); // skipped, not asked
    expect(ctx.log.take()).toEqual({ llm_engine: "b" });
    clock.advance(29_999);
    await text(model.stream(REQUEST));
    expect(a.calls).toBe(4);
    clock.advance(1);
    expect(await text(model.stream(REQUEST))).toBe("a says hi. Bye.");
    expect(a.calls).toBe(5);
  });

  it("when every engine is cooling down they are still tried, in order", async () => {
    clock.set(0);
    const ctx = context();
    for (const id of ["a", "b"]) for (let i = 0; i < SETTINGS.coolDownAfter; i++) ctx.health.failed(id, SETTINGS);
    const a = new StandIn("a", ["ok"]);
    expect(await text(new FailoverModel(slots(a, new StandIn("b", ["ok"])), ctx).stream(REQUEST))).toBe("a says hi. Bye.");
  });
});

/** A voice: `fails` times an error (or a hang), then a tone of `text.length` samples. */
class Voice implements TextToSpeech {
  calls = 0;
  constructor(
    readonly name: string,
    private readonly fails: number,
    private readonly how: "429" | "hang" = "429",
  ) {}
  async synthesize(text: string, signal?: AbortSignal): Promise<Speech> {
    if (this.calls++ < this.fails) {
      if (this.how === "hang") await new Promise((_, reject) => signal?.addEventListener("abort", () => reject(signal.reason)));
      throw new SpeechError(`${this.name} answered HTTP 429`, 429);
    }
    return { samples: new Int16Array(text.length), rate: 16000 };
  }
}

describe("FailoverTextToSpeech / FailoverSpeechToText", () => {
  it("a sentence whose voice fails (or hangs) is spoken by the next voice, streamed or whole", async () => {
    const ctx = context();
    const tts = new FailoverTextToSpeech(slots(new Voice("a", 1), new Voice("b", 0)), ctx);
    expect((await tts.synthesize("Hello")).samples.length).toBe(5);
    const pieces: Speech[] = [];
    for await (const p of tts.stream("Hi there")) pieces.push(p);
    expect(pieces.map((p) => p.samples.length)).toEqual([8]);
    expect(ctx.log.take()).toEqual({ tts_engine: "b, a", failovers: "tts a → b (429)", failover_count: 1 });

    const slow = new FailoverTextToSpeech(slots(new Voice("c", 1, "hang"), new Voice("d", 0)), ctx);
    expect((await slow.synthesize("Hey")).samples.length).toBe(3);
    expect(ctx.log.take()).toMatchObject({ tts_engine: "d", failovers: "tts c → d (timeout)" });
  });

  it("a turn's transcription moves to the next engine; a failed live transcription is recorded and cools its engine", async () => {
    const ctx = context();
    let liveFails = true;
    const stream = (): SpeechStream => ({
      push() {},
      abort() {},
      finish: async () => (liveFails ? Promise.reject(new SpeechError("socket 429", 429)) : "live words"),
    });
    const a: SpeechToText & { name: string } = {
      name: "a",
      transcribe: async () => Promise.reject(new SpeechError("a answered HTTP 503", 503)),
      open: () => stream(),
    };
    const b: SpeechToText & { name: string } = { name: "b", transcribe: async () => "whole words" };
    const stt = new FailoverSpeechToText(slots(a, b), ctx);
    const audio = { samples: new Int16Array(160), rate: 8000 as const };
    expect(await stt.transcribe(audio)).toBe("whole words");
    expect(ctx.log.take()).toEqual({ stt_engine: "b", failovers: "stt a → b (503)", failover_count: 1 });

    await expect(stt.open!(8000).finish()).rejects.toThrow("socket 429");
    expect(ctx.log.take()?.failovers).toBe("stt a (live) → whole turn (429)");
    liveFails = false;
    expect(await stt.open!(8000).finish()).toBe("live words");
    expect(ctx.log.take()).toEqual({ stt_engine: "a" });
  });
});

describe("the idle policy's filler with failover", () => {
  it("a reply late because an engine failed over gets the filler after 1 s instead of filler_after_ms", () => {
    const plain = new IdlePolicy(DEFAULT_TURN_SETTINGS);
    const hurried = new IdlePolicy(DEFAULT_TURN_SETTINGS);
    plain.awaitReply(0);
    hurried.awaitReply(0);
    hurried.failingOver();
    const state = { speaking: false, thinking: true };
    expect([plain.tick(999, state), hurried.tick(999, state)]).toEqual([null, null]);
    expect([plain.tick(1000, state), hurried.tick(1000, state)]).toEqual([null, "filler"]);
    expect(plain.tick(DEFAULT_TURN_SETTINGS.fillerAfterMs, state)).toBe("filler");
    // The next turn starts unhurried; an agent that wants no filler (0) gets none.
    hurried.awaitReply(5000);
    expect(hurried.tick(6000, state)).toBeNull();
    const never = new IdlePolicy({ ...DEFAULT_TURN_SETTINGS, fillerAfterMs: 0 });
    never.awaitReply(0);
    never.failingOver();
    expect(never.tick(1500, state)).toBeNull();
  });
});
