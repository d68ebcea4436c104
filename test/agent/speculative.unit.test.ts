// The speculative model: a request started ahead is used only by the same request, aborted otherwise.
import { describe, expect, it } from "vitest";
import type { ChatEvent, ChatModel, ChatRequest } from "../../src/agent/chat";
import { SpeculativeModel, withTurn } from "../../src/agent/speculative";

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
