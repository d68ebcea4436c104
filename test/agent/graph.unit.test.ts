// The voice agent's brain without audio: the graph executor over scripted model turns (prompts, tools from edges,
// transitions, extraction, disposition, the end), the reply runner (sentences as they stream, hops bounded) and the
// sentence splitter.
import { describe, expect, it } from "vitest";
import type { ChatEvent, ChatModel, ChatRequest } from "../../src/agent/chat";
import { CALL_INSTRUCTIONS, Conversation, END_CALL_TOOL, MAX_HOPS_PER_TURN } from "../../src/agent/graph";
import { SCRIPT_FALLBACK, ScriptedModel } from "../../src/agent/scripted-model";
import { MAX_SENTENCE_CHARS, SentenceSplitter } from "../../src/agent/sentences";
import { agentReply, type ReplyEvent } from "../../src/agent/turn";

const DEFINITION = {
  nodes: [
    { id: "global", type: "globalNode", data: { prompt: "You work for {{company}}. Be brief." } },
    { id: "start", type: "startCall", data: { prompt: "Ask {{first_name}} if they want to hear about the offer.", greeting: "Hi {{first_name}}!" } },
    {
      id: "pitch",
      type: "agentNode",
      data: {
        prompt: "Explain the offer and ask how many seats they need.",
        extraction_variables: [
          { name: "seats", type: "number", prompt: "How many seats" },
          { name: "wants_demo", type: "boolean", prompt: "Whether they want a demo" },
          { name: "bad name!", type: "string" },
        ],
      },
    },
    { id: "bye", type: "endCall", data: { prompt: "Thank them and say goodbye." } },
    { id: "sorry", type: "endCall", data: { prompt: "Apologise for the bother and say goodbye." } },
  ],
  edges: [
    { id: "e1", source: "start", target: "pitch", data: { label: "Interested!", condition: "They want to hear about the offer" } },
    { id: "e2", source: "start", target: "sorry", data: { label: "Not interested", condition: "They do not want to hear about it" } },
    { id: "e3", source: "pitch", target: "bye", data: { label: "done", condition: "They told you the number of seats" } },
  ],
};
const VARS = { first_name: "Ada", company: "Edgedial" };
const CODES = ["interested", "not_interested"];

async function reply(conv: Conversation, model: ChatModel) {
  const events: ReplyEvent[] = [];
  const gen = agentReply(conv, model);
  for (;;) {
    const r = await gen.next();
    if (r.done) return { events, summary: r.value };
    events.push(r.value);
  }
}

describe("the graph as a conversation", () => {
  it("renders the greeting and the prompts (global first), and offers the node's edges as tools", () => {
    const conv = new Conversation(DEFINITION, VARS, CODES);
    expect(conv.greeting).toBe("Hi Ada!");
    expect(conv.nodeId).toBe("start");
    expect(conv.systemPrompt()).toBe(`${CALL_INSTRUCTIONS}\n\nYou work for Edgedial. Be brief.\n\nAsk Ada if they want to hear about the offer.`);
    expect(conv.tools()).toEqual([
      { name: "interested", description: "They want to hear about the offer", parameters: { type: "object", properties: {}, required: [] } },
      { name: "not_interested", description: "They do not want to hear about it", parameters: { type: "object", properties: {}, required: [] } },
    ]);
    expect(conv.ending).toBe(false);
  });

  it("greeting → the callee answers → an edge → the second node (extraction) → endCall (disposition) → the end", async () => {
    const conv = new Conversation(DEFINITION, VARS, CODES);
    conv.said(conv.greeting!);
    const model = new ScriptedModel([
      { user: "tell me", prompt: "Ask Ada", call: { name: "interested" } },
      { user: "tell me", prompt: "Explain the offer", say: "It is a phone agent. How many seats do you need?" },
      { user: /(\d+) seats/, prompt: "Explain the offer", say: "Great.", call: { name: "done", arguments: { seats: "12 seats", wants_demo: "yes" } } },
      { prompt: "Thank them", say: "Thanks Ada, goodbye!", call: { name: END_CALL_TOOL, arguments: { disposition: "interested" } } },
    ]);

    conv.heard("Sure, tell me more.");
    const first = await reply(conv, model);
    expect(first.events).toEqual([
      { type: "moved", from: "start", to: "pitch" },
      { type: "sentence", text: "It is a phone agent." },
      { type: "sentence", text: "How many seats do you need?" },
    ]);
    expect(first.summary).toMatchObject({ ended: false, hops: 1, text: "It is a phone agent. How many seats do you need?" });
    // At the second node the model is offered its edge, with the node's extraction variables as arguments.
    const atPitch = model.requests[1];
    expect(atPitch.messages[0].content).toContain("Explain the offer and ask how many seats they need.");
    expect(atPitch.tools).toEqual([
      {
        name: "done",
        description: "They told you the number of seats",
        parameters: {
          type: "object",
          properties: { seats: { type: "number", description: "How many seats" }, wants_demo: { type: "boolean", description: "Whether they want a demo" } },
          required: [],
        },
      },
    ]);

    conv.heard("We need 12 seats.");
    const second = await reply(conv, model);
    expect(second.events).toEqual([
      { type: "sentence", text: "Great." },
      { type: "moved", from: "pitch", to: "bye" },
      // A round's first piece ends at its first clause (sentences.ts), so its voice starts sooner.
      { type: "sentence", text: "Thanks Ada," },
      { type: "sentence", text: "goodbye!" },
      { type: "end", disposition: "interested" },
    ]);
    expect(second.summary).toMatchObject({ ended: true, hops: 1, text: "Great. Thanks Ada, goodbye!" });
    // The endCall node offers end_call with the organization's disposition codes.
    expect(model.requests[3].tools).toEqual([
      {
        name: END_CALL_TOOL,
        description: "End the call once you have said goodbye",
        parameters: { type: "object", properties: { disposition: { type: "string", enum: CODES, description: "How the call turned out" } }, required: [] },
      },
    ]);
    expect(conv.gathered).toEqual({ seats: 12, wants_demo: true });
    expect(conv.disposition).toBe("interested");
    expect(conv.path).toEqual(["start", "pitch", "bye"]);
    // The history the model saw: greeting, turns, each tool call and its result.
    expect(conv.history.map((m) => `${m.role}:${m.role === "assistant" && m.toolCalls ? `call ${m.toolCalls[0].name}` : m.content}`)).toEqual([
      "assistant:Hi Ada!",
      "user:Sure, tell me more.",
      "assistant:call interested",
      "tool:Moved to pitch.",
      "assistant:It is a phone agent. How many seats do you need?",
      "user:We need 12 seats.",
      "assistant:Great.",
      "assistant:call done",
      "tool:Moved to bye.",
      "assistant:Thanks Ada, goodbye!",
      "assistant:call end_call",
      "tool:The call will end after your goodbye.",
    ]);
  });

  it("an endCall reply ends the call even when the model names no end_call; a disposition outside the codes is not taken", async () => {
    const conv = new Conversation(DEFINITION, VARS, CODES);
    conv.heard("No thanks.");
    const model = new ScriptedModel([
      { prompt: "Ask Ada", call: { name: "not_interested" } },
      { prompt: "Apologise", say: "Sorry to bother you. Bye!" },
    ]);
    const r = await reply(conv, model);
    expect(r.summary).toMatchObject({ ended: true, text: "Sorry to bother you. Bye!" });
    expect(conv.disposition).toBeNull();

    const other = new Conversation(DEFINITION, VARS, CODES);
    other.heard("No thanks.");
    const r2 = await reply(
      other,
      new ScriptedModel([
        { prompt: "Ask Ada", call: { name: "not_interested" } },
        { prompt: "Apologise", say: "Bye!", call: { name: END_CALL_TOOL, arguments: { disposition: "made_up" } } },
      ]),
    );
    expect(r2.summary.ended).toBe(true);
    expect(other.disposition).toBeNull();
  });

  it("a tool the node does not offer is refused (the model is told, and asked again)", async () => {
    const conv = new Conversation(DEFINITION, VARS, CODES);
    conv.heard("Hello?");
    const model: ChatModel = {
      calls: 0,
      async *stream(req: ChatRequest): AsyncIterable<ChatEvent> {
        if ((this as any).calls++ === 0) yield { type: "tool_call", call: { id: "c1", name: END_CALL_TOOL, arguments: {} } };
        else yield { type: "text", text: `Last, ${req.messages[req.messages.length - 1].content}.` };
      },
    } as ChatModel & { calls: number };
    const r = await reply(conv, model);
    expect(r.events).toEqual([{ type: "sentence", text: "Last, Not done: no action named end_call here." }]);
    expect(r.summary.ended).toBe(false);
    expect(conv.nodeId).toBe("start");
  });

  it("a model that keeps moving is stopped after MAX_HOPS_PER_TURN rounds in one reply; the last round offers no tools", async () => {
    const loop = {
      nodes: [
        { id: "a", type: "startCall", data: { prompt: "A" } },
        { id: "b", type: "agentNode", data: { prompt: "B" } },
      ],
      edges: [
        { id: "ab", source: "a", target: "b", data: { label: "go" } },
        { id: "ba", source: "b", target: "a", data: { label: "go" } },
      ],
    };
    const conv = new Conversation(loop, {});
    let asked = 0;
    const offered: number[] = [];
    const model: ChatModel = {
      async *stream(request) {
        asked++;
        offered.push(request.tools.length);
        yield { type: "tool_call", call: { id: `c${asked}`, name: "go", arguments: {} } };
      },
    };
    const r = await reply(conv, model);
    expect(asked).toBe(MAX_HOPS_PER_TURN + 1);
    expect(r.summary.hops).toBe(MAX_HOPS_PER_TURN);
    expect(offered.at(-1)).toBe(0);
    expect(r.summary.ended).toBe(false);
  });

  it("a barge-in keeps only what was played in the history", () => {
    const conv = new Conversation(DEFINITION, VARS);
    conv.said("Hi Ada! I am calling about our offer, which");
    conv.interrupted("Hi Ada!");
    expect(conv.history).toEqual([{ role: "assistant", content: "Hi Ada!" }]);
    conv.heard("Who is this?");
    conv.said("This is Edgedial.");
    conv.interrupted("");
    expect(conv.history).toEqual([
      { role: "assistant", content: "Hi Ada!" },
      { role: "user", content: "Who is this?" },
    ]);
  });

  it("a barge-in in a reply that spanned two model rounds trims the round that was playing and drops the rest", async () => {
    const conv = new Conversation(DEFINITION, VARS);
    conv.heard("Sure, tell me.");
    const model = new ScriptedModel([
      { user: "Sure, tell me.", say: "Great. Let me explain.", call: { name: "interested", arguments: {} } },
      { user: "Sure, tell me.", say: "It costs ten euros. How many seats do you need?" },
    ]);
    await reply(conv, model);
    expect(conv.nodeId).toBe("pitch");
    // Heard: the whole first round and the first sentence of the second.
    conv.interrupted("Great. Let me explain. It costs ten euros.");
    const assistant = conv.history.filter((m) => m.role === "assistant");
    expect(assistant.map((m) => m.content)).toEqual(["Great. Let me explain.", "", "It costs ten euros."]);
    // Cut inside the first round: its played part stays, the second round's text goes, the transition stays.
    const conv2 = new Conversation(DEFINITION, VARS);
    conv2.heard("Sure, tell me.");
    await reply(conv2, model);
    conv2.interrupted("Great.");
    expect(conv2.history.filter((m) => m.role === "assistant").map((m) => [m.content, m.toolCalls?.length ?? 0])).toEqual([
      ["Great.", 0],
      ["", 1],
    ]);
    expect(conv2.history.at(-1)?.role).toBe("tool");
  });

  it("tool names are what model APIs accept, and unique; edges to missing nodes are dropped; a graph without a start is refused", () => {
    const def = {
      nodes: [
        { id: "s", type: "startCall", data: {} },
        { id: "t", type: "endCall", data: {} },
      ],
      edges: [
        { id: "1", source: "s", target: "t", data: { label: "Yes — please!" } },
        { id: "2", source: "s", target: "t", data: { label: "yes please" } },
        { id: "3", source: "s", target: "t", data: { label: "end_call" } },
        { id: "4", source: "s", target: "t" },
        { id: "5", source: "s", target: "nowhere", data: { label: "lost" } },
      ],
    };
    const names = new Conversation(def, {}).tools().map((t) => t.name);
    expect(names).toEqual(["yes_please", "yes_please_2", "end_call_2", "to_t"]);
    for (const n of names) expect(n).toMatch(/^[a-z0-9_-]{1,64}$/);
    expect(new Conversation(def, {}).greeting).toBeNull();
    expect(() => new Conversation({ nodes: [], edges: [] }, {})).toThrow("no startCall node");
  });

  it("the scripted model falls back to asking again when nothing in its script matches", async () => {
    const conv = new Conversation(DEFINITION, VARS);
    conv.heard("Blah.");
    const r = await reply(conv, new ScriptedModel([{ user: "never said", say: "no" }]));
    expect(r.summary.text).toBe(SCRIPT_FALLBACK);
  });
});

describe("sentences from a streaming reply", () => {
  it("cuts at sentence ends and line breaks as the tokens arrive, and gives the rest at the end", () => {
    const s = new SentenceSplitter();
    const out: string[] = [];
    for (const piece of ["Hel", "lo there. How", " are you? I'm", " fine", "!\nGood", ' "quoted." Done']) out.push(...s.push(piece));
    expect(out).toEqual(["Hello there.", "How are you?", "I'm fine!", 'Good "quoted."']);
    expect(s.flush()).toBe("Done");
    expect(s.flush()).toBeNull();
  });

  it("does not cut a decimal or a number, and cuts a very long run-on sentence at a space", () => {
    const s = new SentenceSplitter();
    expect(s.push("It costs 3.50 a month")).toEqual([]);
    const long = `${"word ".repeat(100)}end`;
    const cut = s.push(` ${long}`);
    expect(cut.length).toBeGreaterThan(0);
    for (const c of cut) expect(c.length).toBeLessThanOrEqual(MAX_SENTENCE_CHARS);
    expect([...cut, s.flush()].join(" ")).toBe(`It costs 3.50 a month ${long}`.replace(/\s+/g, " "));
  });

  it("the reply's first piece ends at its first clause when no sentence has ended; later pieces are whole sentences", () => {
    const s = new SentenceSplitter();
    const out: string[] = [];
    for (const piece of ["Sure", ",", " I", " can", " help", ",", " of", " course", ".", " Bye", ", then", "."]) out.push(...s.push(piece));
    expect([...out, s.flush()]).toEqual(["Sure,", "I can help, of course.", "Bye, then."]);
    // Not a number's comma, nor a clause whose sentence already ended in the same piece (said whole).
    expect(new SentenceSplitter().push("It is 1,000 dollars")).toEqual([]);
    const whole = new SentenceSplitter();
    expect(whole.push("Sorry, I can't.")).toEqual([]);
    expect(whole.flush()).toBe("Sorry, I can't.");
    const dash = new SentenceSplitter();
    expect(dash.push("Well — let me see")).toEqual(["Well —"]);
  });
});
