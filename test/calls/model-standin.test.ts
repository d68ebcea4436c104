// An OpenAI-compatible chat-completions endpoint (a hosted model, or a local server such as Ollama) as the agent's
// model, against the Node stand-in (test/calls/speech-standin.global.ts): the request as such endpoints take it, the
// streamed reply read across arbitrary cuts, and the endpoint's refusals and silence as ModelErrors.
import { describe, expect, inject, it } from "vitest";
import type { ChatEvent, ChatRequest } from "../../src/agent/chat";
import { ModelError } from "../../src/agent/chat-stream";
import { OpenAiModel } from "../../src/agent/openai-model";

const BASE = `http://127.0.0.1:${inject("speechStandinPort")}/v1`;
const key = (behaviour = "ok") => `${behaviour}-${crypto.randomUUID()}`;

const REQUEST: ChatRequest = {
  messages: [
    { role: "system", content: "Ask how many seats they need." },
    { role: "user", content: "We need twelve seats." },
  ],
  tools: [{ name: "interested", description: "They want it", parameters: { type: "object", properties: { seats: { type: "number" } }, required: [] } }],
};

async function all(model: OpenAiModel): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const e of model.stream(REQUEST)) out.push(e);
  return out;
}

const sentUnder = async (apiKey: string) =>
  (await (await fetch(`${BASE.replace("/v1", "")}/_standin/log?key=chat:${encodeURIComponent(apiKey)}`)).json()) as any[];

describe("an OpenAI-compatible endpoint through a stand-in server", () => {
  it("sends the chat, the tools and the key as such endpoints take them; reads text, a fragmented tool call and usage", async () => {
    const k = key();
    const events = await all(new OpenAiModel({ baseUrl: `${BASE}/`, apiKey: k, model: "llama3.1" }));
    expect(
      events
        .filter((e) => e.type === "text")
        .map((e) => (e as { text: string }).text)
        .join(""),
    ).toBe("Hello there. How are you?");
    expect(events.filter((e) => e.type === "tool_call")).toEqual([{ type: "tool_call", call: { id: "call_1", name: "interested", arguments: { seats: 12 } } }]);
    expect(events.filter((e) => e.type === "usage")).toEqual([{ type: "usage", inputTokens: 42, outputTokens: 7 }]);
    const [seen] = await sentUnder(k);
    expect(seen.headers.authorization).toBe(`Bearer ${k}`);
    expect(seen.body).toMatchObject({
      model: "llama3.1",
      stream: true,
      stream_options: { include_usage: true },
      tool_choice: "auto",
      messages: [
        { role: "system", content: "Ask how many seats they need." },
        { role: "user", content: "We need twelve seats." },
      ],
      tools: [{ type: "function", function: { name: "interested", description: "They want it" } }],
    });
  });

  it("a local server without a key gets no Authorization header", async () => {
    await all(new OpenAiModel({ baseUrl: BASE, apiKey: "", model: "llama3.1" }));
    const [seen] = await sentUnder("");
    expect(seen.headers.authorization).toBe("");
  });

  it("refusals, an overloaded endpoint and a silent one are ModelErrors saying what happened, never the key", async () => {
    const cases: [string, number | null, string][] = [
      [key("deny"), 401, "The model endpoint answered HTTP 401: Incorrect API key provided."],
      [key("fail"), 503, "The model endpoint answered HTTP 503: The server is overloaded."],
      [key("slow"), null, "The model endpoint could not be reached: timed out"],
    ];
    for (const [k, status, message] of cases) {
      const err = await all(new OpenAiModel({ baseUrl: BASE, apiKey: k, model: "m", timeoutMs: 500 })).then(
        () => null,
        (e) => e,
      );
      expect(err).toBeInstanceOf(ModelError);
      expect([err.status, err.message]).toEqual([status, message]);
      expect(err.message).not.toContain(k);
    }
  });
});
