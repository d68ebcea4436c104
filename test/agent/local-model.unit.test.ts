// The offline model of local development walks an agent's graph: it repeats what it heard, takes the first
// transition that needs no arguments, says nothing more right after a move, and at an endCall node says goodbye and
// ends the call; the agent's own actions (a transfer, keys) are never called.
import { describe, expect, it } from "vitest";
import type { ChatEvent, ChatRequest, ToolSpec } from "../../src/agent/chat";
import { LOCAL_MODEL_GOODBYE, LocalModel } from "../../src/agent/local-model";

const tool = (name: string, required: string[] = []): ToolSpec => ({
  name,
  description: name,
  parameters: { type: "object", properties: Object.fromEntries(required.map((r) => [r, { type: "string" }])), required },
});

async function reply(request: ChatRequest) {
  const events: ChatEvent[] = [];
  for await (const e of new LocalModel(new Set(["end_call", "transfer_call", "send_dtmf"])).stream(request)) events.push(e);
  const text = events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
  const calls = events.flatMap((e) => (e.type === "tool_call" ? [e.call.name] : []));
  return { text, calls };
}

describe("the local model", () => {
  it("opens the call when nobody spoke yet", async () => {
    expect(await reply({ messages: [{ role: "system", content: "Be nice" }], tools: [] })).toEqual({ text: "Hello! How can I help you today?", calls: [] });
  });

  it("repeats the caller's words and takes the first transition that needs no arguments, never an action", async () => {
    const r = await reply({
      messages: [
        { role: "system", content: "Qualify" },
        { role: "user", content: "We need twelve seats." },
      ],
      tools: [tool("transfer_call"), tool("needs_seats", ["seats"]), tool("interested")],
    });
    expect(r).toEqual({ text: "You said: We need twelve seats. Got it.", calls: ["interested"] });
  });

  it("says nothing more right after a move, and says goodbye at an endCall node", async () => {
    const moved = await reply({
      messages: [
        { role: "system", content: "Next" },
        { role: "user", content: "Sure" },
        { role: "assistant", content: "", toolCalls: [{ id: "1", name: "interested", arguments: {} }] },
        { role: "tool", toolCallId: "1", content: "moved" },
      ],
      tools: [tool("next")],
    });
    expect(moved).toEqual({ text: "", calls: [] });
    const end = await reply({
      messages: [
        { role: "system", content: "Bye" },
        { role: "user", content: "ok" },
      ],
      tools: [tool("end_call")],
    });
    expect(end).toEqual({ text: LOCAL_MODEL_GOODBYE, calls: ["end_call"] });
  });
});
