// The speculative model: a request started ahead is used only by the same request, aborted otherwise; its first
// sentence voiced ahead is used only by a reply that speaks it first.
import { describe, expect, it } from "vitest";
import type { ChatEvent, ChatModel, ChatRequest } from "../../src/agent/chat";
import { SpeculativeModel, withTurn } from "../../src/agent/speculative";
import { SpeculativeVoice } from "../../src/agent/speculative-voice";
import type { Speech, TextToSpeech } from "../../src/agent/speech";

/** A model that answers with the last user words, and records each request and whether it was aborted. */
class Echo implements ChatModel {
  readonly calls: { last: string; signal?: AbortSignal }[] = [];
  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
    const last = String(request.messages.at(-1)?.content ?? "");
    this.calls.push({ last, signal });
    await new Promise((r) => setTimeout(r, 5));
    yield { type: "text", text: `You said ${last}.` };
  }
}

const base: ChatRequest = { messages: [{ role: "system", content: "Be brief." }], tools: [] };
const collect = async (it: AsyncIterable<ChatEvent>) => {
  const out: string[] = [];
  for await (const ev of it) if (ev.type === "text") out.push(ev.text);
  return out.join("");
};

describe("SpeculativeModel", () => {
  it("the same request takes the stream started ahead (the model is asked once)", async () => {
    const echo = new Echo();
    const m = new SpeculativeModel(echo);
    m.start(withTurn(base, "hello"));
    expect(await collect(m.stream(withTurn(base, "hello")))).toBe("You said hello.");
    expect(echo.calls.length).toBe(1);
    expect(m.counts).toEqual({ started: 1, used: 1, dropped: 0 });
  });

  it("other words abort it and ask afresh; cancel aborts it", async () => {
    const echo = new Echo();
    const m = new SpeculativeModel(echo);
    m.start(withTurn(base, "hello"));
    expect(await collect(m.stream(withTurn(base, "hello there")))).toBe("You said hello there.");
    expect(echo.calls.map((c) => [c.last, !!c.signal?.aborted])).toEqual([
      ["hello", true],
      ["hello there", false],
    ]);
    m.start(withTurn(base, "again"));
    m.cancel();
    expect(echo.calls[2].signal?.aborted).toBe(true);
    expect(m.speculating).toBe(false);
    expect(m.counts).toEqual({ started: 2, used: 0, dropped: 2 });
  });
});

/** A whole-sentence voice that records what it was asked and whether the request was aborted. */
class Voice implements TextToSpeech {
  readonly asked: { text: string; signal?: AbortSignal }[] = [];
  async synthesize(text: string, signal?: AbortSignal): Promise<Speech> {
    this.asked.push({ text, signal });
    await new Promise((r) => setTimeout(r, 5));
    return { samples: new Int16Array(text.length), rate: 8000 };
  }
}

/** A model streaming its reply a token at a time. */
const tokens = (pieces: string[]): ChatModel => ({
  async *stream() {
    for (const text of pieces) {
      await new Promise((r) => setTimeout(r, 1));
      yield { type: "text", text } as ChatEvent;
    }
  },
});

describe("SpeculativeVoice", () => {
  it("the speculative reply's first sentence is voiced ahead and taken once by the reply that speaks it", async () => {
    const voice = new Voice();
    const ahead = new SpeculativeVoice(voice);
    const m = new SpeculativeModel(tokens(["Sure", ",", " I", " can", "."]), ahead);
    m.start(withTurn(base, "hello"));
    expect(await collect(m.stream(withTurn(base, "hello")))).toBe("Sure, I can.");
    expect(voice.asked.map((a) => a.text)).toEqual(["Sure,"]);
    const audio = await ahead.synthesize("Sure,");
    expect(audio.samples.length).toBe(5);
    expect(voice.asked.length).toBe(1); // from the prefetch, not asked again
    await ahead.synthesize("Sure,"); // once only: asked afresh now
    expect(voice.asked.length).toBe(2);
    expect(ahead.counts).toEqual({ prefetched: 1, used: 1 });
  });

  it("dropped with the speculation (the caller went on): its request is aborted and the reply voices afresh", async () => {
    const voice = new Voice();
    const ahead = new SpeculativeVoice(voice);
    const m = new SpeculativeModel(tokens(["Sure", ",", " I", " can", "."]), ahead);
    m.start(withTurn(base, "hello"));
    // Until the first clause has streamed in and been sent to the voice (a fixed 20 ms was too short on a busy machine).
    for (let waited = 0; voice.asked.length === 0 && waited < 5000; waited += 5) await new Promise((r) => setTimeout(r, 5));
    expect(voice.asked.map((a) => a.text)).toEqual(["Sure,"]);
    m.cancel();
    expect(voice.asked[0].signal?.aborted).toBe(true);
    await ahead.synthesize("Sure,");
    expect(voice.asked.length).toBe(2);
    expect(ahead.counts.used).toBe(0);
  });

  it("a streaming voice's pieces are read ahead and taken in order; another sentence is not served from them", async () => {
    const streamed: string[] = [];
    const inner: TextToSpeech = {
      synthesize: async () => ({ samples: new Int16Array(0), rate: 8000 }),
      async *stream(text) {
        streamed.push(text);
        for (let i = 1; i <= 3; i++) yield { samples: new Int16Array(i), rate: 8000 };
      },
    };
    const ahead = new SpeculativeVoice(inner);
    ahead.prefetch("Okay,");
    const other = [];
    for await (const s of ahead.stream!("Hello.")) other.push(s.samples.length);
    const pieces = [];
    for await (const s of ahead.stream!("Okay,")) pieces.push(s.samples.length);
    expect([streamed, other, pieces]).toEqual([
      ["Okay,", "Hello."],
      [1, 2, 3],
      [1, 2, 3],
    ]);
    expect(ahead.counts.used).toBe(1);
  });
});
