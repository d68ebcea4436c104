// The offline model of local development follows an agent's graph with plausible replies: at a node it says what the
// node's prompt intends (a quoted line, else its first instruction said to the caller), takes the transition whose
// words best match the caller's (else the first that needs no arguments, never an action), fills and mentions the
// node's variables, speaks the next node's line right after a move, and at an endCall node says goodbye and ends.
import { describe, expect, it } from "vitest";
import type { ChatEvent, ChatMessage, ChatRequest, ToolSpec } from "../../src/agent/chat";
import { CALL_INSTRUCTIONS, Conversation } from "../../src/agent/graph";
import { intendedLine, LOCAL_MODEL_GOODBYE, LOCAL_MODEL_OPENING, LocalModel } from "../../src/agent/local-model";
import { agentReply } from "../../src/agent/turn";

const RESERVED = new Set(["end_call", "transfer_call", "send_dtmf"]);

const tool = (name: string, description = name, props: ToolSpec["parameters"]["properties"] = {}, required: string[] = []): ToolSpec => ({
  name,
  description,
  parameters: { type: "object", properties: props, required },
});

const system = (prompt: string): ChatMessage => ({ role: "system", content: `${CALL_INSTRUCTIONS}\n\n${prompt}` });

async function reply(request: ChatRequest) {
  const events: ChatEvent[] = [];
  for await (const e of new LocalModel(RESERVED).stream(request)) events.push(e);
  const text = events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
  const calls = events.flatMap((e) => (e.type === "tool_call" ? [{ name: e.call.name, arguments: e.call.arguments }] : []));
  return { text, calls };
}

describe("what a node's prompt intends", () => {
  it.each([
    ["Ask how many seats they need.", "Could you tell me how many seats you need?"],
    ["Ask Alan about the conference.", "Could I ask you about the conference?"],
    ["Thank them and say goodbye.", LOCAL_MODEL_GOODBYE],
    ['Greet them warmly. Say "Welcome to Acme, how can I help?" and wait.', "Welcome to Acme, how can I help?"],
    ["You are Sam, a friendly assistant. Keep replies short. Qualify: ask when Alan would like to start.", "Could you tell me when Alan would like to start?"],
    ["Not interested: apologise for the interruption, thank them and say goodbye.", "I'm sorry for the interruption. Thank you for your time. Goodbye!"],
    [
      "Later: say a specialist will email Alan with details, thank them and say goodbye.",
      "A specialist will email Alan with details. Thank you for your time. Goodbye!",
    ],
    ["Ask them to spell their name.", "Could you please spell your name?"],
    [
      "Find out whether the caller wants our opening hours or to leave a message.",
      "Could you tell me whether you want our opening hours or to leave a message?",
    ],
    ["Let them know we are open 9 to 5 (weekdays only).", "We are open 9 to 5."],
    ["Be concise.", ""],
  ])("%s → %s", (prompt, line) => {
    expect(intendedLine(prompt)).toBe(line);
  });
});

describe("the local model", () => {
  it("opens the call with the start node's line, or a greeting when it has none", async () => {
    expect(await reply({ messages: [system("Ask Ada about the conference.")], tools: [] })).toEqual({
      text: "Could I ask you about the conference?",
      calls: [],
    });
    expect(await reply({ messages: [system("Be nice")], tools: [] })).toEqual({ text: LOCAL_MODEL_OPENING, calls: [] });
  });

  it("takes the transition whose words match the caller's, never an action, and acknowledges", async () => {
    const tools = [tool("transfer_call"), tool("interested", "They want to hear more"), tool("not_interested", "They are not interested or busy")];
    const no = await reply({ messages: [system("Ask if they have a minute."), { role: "user", content: "Sorry, I'm busy." }], tools });
    expect(no).toEqual({ text: "I understand.", calls: [{ name: "not_interested", arguments: {} }] });
    const yes = await reply({ messages: [system("Ask if they have a minute."), { role: "user", content: "Sure, go ahead." }], tools });
    expect(yes).toEqual({ text: "Great.", calls: [{ name: "interested", arguments: {} }] });
  });

  it("takes the first transition that needs no arguments when no words match", async () => {
    const r = await reply({
      messages: [system("Qualify"), { role: "user", content: "Hmm." }],
      tools: [tool("transfer_call"), tool("needs_seats", "needs_seats", { seats: { type: "number" } }, ["seats"]), tool("onwards", "Go on")],
    });
    expect(r).toEqual({ text: "Okay.", calls: [{ name: "onwards", arguments: {} }] });
  });

  it("fills the node's variables from the caller's words and says what it noted", async () => {
    const props = { seats: { type: "number" as const, description: "How many seats" }, company: { type: "string" as const } };
    const r = await reply({
      messages: [system("Ask how many seats they need."), { role: "user", content: "We need twelve seats." }],
      tools: [tool("done", "They answered", props)],
    });
    expect(r).toEqual({
      text: "Thank you, I've noted your seats: 12, and your company: We need twelve seats.",
      calls: [{ name: "done", arguments: { seats: 12, company: "We need twelve seats" } }],
    });
  });

  it("says the new node's line right after a move, and at an endCall node its goodbye, ending the call", async () => {
    const moved = await reply({
      messages: [
        system("Ask how many seats they need."),
        { role: "user", content: "Sure" },
        { role: "assistant", content: "", toolCalls: [{ id: "1", name: "interested", arguments: {} }] },
        { role: "tool", toolCallId: "1", content: "Moved to ask." },
      ],
      tools: [tool("next")],
    });
    expect(moved).toEqual({ text: "Could you tell me how many seats you need?", calls: [] });
    const end = await reply({ messages: [system("Thank them and say goodbye."), { role: "user", content: "ok" }], tools: [tool("end_call")] });
    expect(end).toEqual({ text: LOCAL_MODEL_GOODBYE, calls: [{ name: "end_call", arguments: {} }] });
    const unsaid = await reply({ messages: [system("Wrap up."), { role: "user", content: "ok" }], tools: [tool("end_call")] });
    expect(unsaid.text).toBe(LOCAL_MODEL_GOODBYE);
  });

  it("walks the README tour's agent from greeting to goodbye", async () => {
    const conv = new Conversation(
      {
        nodes: [
          {
            id: "start",
            type: "startCall",
            data: { prompt: "Ask {{first_name}} about the conference.", greeting: "Hi {{first_name}}, do you have a minute?" },
          },
          { id: "ask", type: "agentNode", data: { prompt: "Ask how many seats they need." } },
          { id: "end", type: "endCall", data: { prompt: "Thank them and say goodbye." } },
        ],
        edges: [
          { id: "e1", source: "start", target: "ask", data: { label: "interested", condition: "They have a minute" } },
          { id: "e2", source: "ask", target: "end", data: { label: "done", condition: "They answered" } },
        ],
      },
      { first_name: "Alan" },
    );
    const model = new LocalModel(RESERVED);
    const said: string[] = [];
    for (const heard of ["Sure, tell me more.", "We need twelve seats."]) {
      conv.heard(heard);
      const it = agentReply(conv, model);
      const sentences: string[] = [];
      for (let r = await it.next(); !r.done; r = await it.next()) if (r.value.type === "sentence") sentences.push(r.value.text);
      said.push(sentences.join(" "));
    }
    expect(conv.greeting).toBe("Hi Alan, do you have a minute?");
    expect(said).toEqual(["Great. Could you tell me how many seats you need?", "Okay. Thank you for your time. Goodbye!"]);
    expect(conv.path).toEqual(["start", "ask", "end"]);
  });
});
