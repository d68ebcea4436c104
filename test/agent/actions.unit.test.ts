// The agent's actions in a reply, over scripted model turns: an HTTP tool offered at its nodes, called with the
// model's arguments, its result (or error) read back by the model which then answers; the transferCall node's
// hand-over (connected stops the reply, no answer tells the caller and goes on along the no-answer edge); key
// presses as the callee's turn and as an edge choice; the keypad's buffering.
import { describe, expect, it } from "vitest";
import type { Action } from "../../src/agent/actions";
import type { ChatMessage, ChatModel } from "../../src/agent/chat";
import { Conversation } from "../../src/agent/graph";
import { Keypad } from "../../src/agent/keypad";
import { ScriptedModel } from "../../src/agent/scripted-model";
import { type ActionResult, agentReply, INTERRUPTED_RESULT, type ReplyEvent, TRANSFER_LINES } from "../../src/agent/turn";

const TOOL = {
  name: "lookup_order",
  description: "Look up an order by its number",
  parameters: { type: "object", properties: { order: { type: "string" } }, required: ["order"] },
  url: "https://api.example.com/orders",
  method: "GET",
  headers: { Authorization: "Bearer s3cret-value" },
  timeout_ms: 2000,
  nodes: ["help"],
};

const DEF = {
  tools: [TOOL],
  nodes: [
    { id: "start", type: "startCall", data: { prompt: "Greet them.", greeting: "Hi!" } },
    { id: "help", type: "agentNode", data: { prompt: "Help with orders.", allow_dtmf: true } },
    { id: "handover", type: "transferCall", data: { destination: "+15550100", mode: "warm", message: "Let me get a colleague.", timeout_seconds: 20 } },
    { id: "fallback", type: "agentNode", data: { prompt: "Offer a call back." } },
    { id: "bye", type: "endCall", data: { prompt: "Say goodbye." } },
  ],
  edges: [
    { id: "e1", source: "start", target: "help", data: { label: "order", condition: "They ask about an order", dtmf: "1" } },
    { id: "e2", source: "start", target: "handover", data: { label: "person", condition: "They want a person", dtmf: "0" } },
    { id: "e3", source: "handover", target: "fallback", data: { on: "no_answer" } },
    { id: "e4", source: "help", target: "bye", data: { label: "done" } },
    { id: "e5", source: "fallback", target: "bye", data: { label: "done" } },
  ],
};

async function reply(conv: Conversation, model: ChatModel, act?: (a: Action) => Promise<ActionResult>, signal?: AbortSignal) {
  const events: ReplyEvent[] = [];
  const gen = agentReply(conv, model, signal, act);
  for (;;) {
    const r = await gen.next();
    if (r.done) return { events, summary: r.value };
    events.push(r.value);
  }
}

const sentences = (events: ReplyEvent[]) => events.flatMap((e) => (e.type === "sentence" ? [e.text] : []));
const roles = (h: ChatMessage[]) => h.map((m) => (m.role === "assistant" && m.toolCalls ? `call:${m.toolCalls[0].name}` : m.role));

describe("actions in a reply", () => {
  it("an HTTP tool is offered only at its nodes; its result goes back to the model, which answers from it", async () => {
    const conv = new Conversation(DEF, {});
    expect(conv.tools().map((t) => t.name)).toEqual(["order", "person"]);
    const model = new ScriptedModel([
      { user: "order", prompt: "Greet them", call: { name: "order" } },
      { user: "order", prompt: "Help with orders", say: "Let me check.", call: { name: "lookup_order", arguments: { order: "A17" } } },
      { user: "order", prompt: "Help with orders", say: "Your order ships tomorrow." },
    ]);
    conv.heard("Where is my order?");
    const seen: Action[] = [];
    const r = await reply(conv, model, async (a) => {
      seen.push(a);
      return { content: '{"status":"ships tomorrow"}' };
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ type: "http", tool: { name: "lookup_order", method: "GET", timeoutMs: 2000 }, arguments: { order: "A17" } });
    expect(sentences(r.events)).toEqual(["Let me check.", "Your order ships tomorrow."]);
    expect(r.events.map((e) => e.type)).toEqual(["moved", "sentence", "action", "sentence"]);
    // The model read the result right after its call (what the chat APIs require).
    const tool = conv.history.find((m) => m.role === "tool" && m.content.includes("ships tomorrow"));
    expect(tool).toBeDefined();
    expect(roles(conv.history)).toEqual(["user", "call:order", "tool", "assistant", "call:lookup_order", "tool", "assistant"]);
    expect(model.requests[1].tools.map((t) => t.name)).toEqual(["lookup_order", "send_dtmf", "done"]);
  });

  it("a failing tool's error is what the model reads, and it still answers", async () => {
    const conv = new Conversation(DEF, {});
    conv.heard("order");
    const model = new ScriptedModel([
      { prompt: "Greet them", call: { name: "order" } },
      { prompt: "Help with orders", call: { name: "lookup_order", arguments: { order: "A17" } } },
      { prompt: "Help with orders", say: "Sorry, I can't look that up right now." },
    ]);
    const r = await reply(conv, model, async () => ({ content: "Error: the tool answered HTTP 500" }));
    expect(conv.history.some((m) => m.role === "tool" && m.content === "Error: the tool answered HTTP 500")).toBe(true);
    expect(sentences(r.events)).toEqual(["Sorry,", "I can't look that up right now."]);
  });

  it("a reply cut off while a tool runs leaves a result saying so (the history stays valid for the next turn)", async () => {
    const conv = new Conversation(DEF, {});
    conv.heard("order");
    const model = new ScriptedModel([
      { prompt: "Greet them", call: { name: "order" } },
      { prompt: "Help with orders", call: { name: "lookup_order", arguments: { order: "A17" } } },
    ]);
    const cut = new AbortController();
    const p = reply(conv, model, () => new Promise((res) => setTimeout(() => res({ content: "late" }), 200)), cut.signal);
    setTimeout(() => cut.abort(), 20);
    await p;
    expect(conv.history.at(-1)).toMatchObject({ role: "tool", content: INTERRUPTED_RESULT });
  });

  it("send_dtmf at a node that allows it: the digits go to the runner; bad digits are refused to the model", async () => {
    const conv = new Conversation(DEF, {});
    conv.heard("order");
    const model = new ScriptedModel([
      { prompt: "Greet them", call: { name: "order" } },
      { prompt: "Help with orders", user: "order", call: { name: "send_dtmf", arguments: { digits: "1 2#" } } },
      { prompt: "Help with orders", say: "Done." },
    ]);
    const seen: Action[] = [];
    await reply(conv, model, async (a) => {
      seen.push(a);
      return { content: "Pressed 12#." };
    });
    expect(seen).toEqual([{ type: "dtmf", digits: "12#" }]);
    const bad = new Conversation(DEF, {});
    bad.heard("order");
    await reply(
      bad,
      new ScriptedModel([
        { prompt: "Greet them", call: { name: "order" } },
        { prompt: "Help", call: { name: "send_dtmf", arguments: { digits: "x" } } },
      ]),
    );
    expect(bad.history.some((m) => m.role === "tool" && m.content.startsWith("Not done: digits must be"))).toBe(true);
  });
});

describe("the transferCall node", () => {
  const toTransfer = () => {
    const conv = new Conversation(DEF, { name: "Ada" });
    conv.heard("A person please");
    return conv;
  };
  const model = () =>
    new ScriptedModel([
      { prompt: "Greet them", call: { name: "person" } },
      { prompt: "Offer a call back", say: "Can we call you back later?" },
    ]);

  it("says the message, then hands over with the node's settings; connected ends the agent's part", async () => {
    const conv = toTransfer();
    const m = model();
    const seen: Action[] = [];
    const r = await reply(conv, m, async (a) => {
      seen.push(a);
      return { content: "handed over", transfer: "connected" };
    });
    expect(sentences(r.events)).toEqual(["Let me get a colleague."]);
    expect(seen).toEqual([
      { type: "transfer", transfer: { destination: "+15550100", mode: "warm", message: "Let me get a colleague.", whisperPrompt: "", timeoutSeconds: 20 } },
    ]);
    expect(r.summary.transferred).toBe(true);
    // The model was asked once (to choose the edge); the transfer needs no round of its own.
    expect(m.requests).toHaveLength(1);
    expect(roles(conv.history).slice(-3)).toEqual(["assistant", "call:transfer_call", "tool"]);
  });

  it.each(["no_answer", "failed", "unsupported"] as const)("%s: the caller is told, and the model goes on along the no-answer edge", async (outcome) => {
    const conv = toTransfer();
    const r = await reply(conv, model(), async () => ({ content: `did not connect: ${outcome}`, transfer: outcome }));
    expect(sentences(r.events)).toEqual(["Let me get a colleague.", TRANSFER_LINES[outcome], "Can we call you back later?"]);
    expect(conv.nodeId).toBe("fallback");
    expect(r.summary.transferred).toBe(false);
    expect(r.summary.ended).toBe(false);
  });
});

describe("the keypad", () => {
  it("keys chosen by an edge are taken without the model; other keys are the callee's turn", () => {
    const conv = new Conversation(DEF, {});
    expect(conv.dtmfChoices()).toEqual(["1", "0"]);
    expect(conv.pressed("1")).toMatchObject({ kind: "moved", from: "start", to: "help" });
    expect(conv.history[0]).toEqual({ role: "user", content: "[The caller pressed 1]" });
    expect(roles(conv.history)).toEqual(["user", "call:order", "tool"]);
    expect(conv.pressed("42#")).toBeNull();
    expect(conv.history.at(-1)).toEqual({ role: "user", content: "[The caller pressed 4 2 #]" });
    expect(conv.nodeId).toBe("help");
  });

  it("buffers keys until #, a pause, or a string an edge waits for that no longer one begins with", () => {
    const k = new Keypad(1500);
    expect(k.press("4", 0, ["1", "12"])).toBeNull();
    expect(k.press("2", 500, ["1", "12"])).toBeNull();
    expect(k.tick(1900)).toBeNull();
    expect(k.tick(2000)).toBe("42");
    expect(k.press("1", 3000, ["1", "12"])).toBeNull();
    expect(k.press("2", 3100, ["1", "12"])).toBe("12");
    expect(k.press("9", 4000, [])).toBeNull();
    expect(k.press("#", 4100, [])).toBe("9#");
    expect(k.press("3", 5000, ["3"])).toBe("3");
    expect(k.pending).toBe(false);
  });
});
