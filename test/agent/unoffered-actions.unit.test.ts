// A model that calls an action its node does not offer (here transfer_call, with a destination of its own choosing,
// at a plain node) is refused: nothing is dialed, the model reads why, and the call stays where it was. The model is
// a fake at the ChatModel boundary because the scripted model only calls tools it was offered.
import { describe, expect, it } from "vitest";
import type { ChatEvent, ChatModel, ChatRequest } from "../../src/agent/chat";
import { ConversationAgent } from "../../src/agent/conversation-agent";
import { Conversation } from "../../src/agent/graph";
import type { AgentControls, TransferRequest } from "../../src/agent/voice-agent";

const DEF = {
  nodes: [
    { id: "s", type: "startCall", data: { prompt: "Answer questions about opening hours.", greeting: "Hi!" } },
    { id: "bye", type: "endCall", data: { prompt: "Say goodbye." } },
  ],
  edges: [{ id: "sb", source: "s", target: "bye", data: { label: "done", condition: "They have no more questions" } }],
};
const ELSEWHERE = "+15559990000";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** First round: a transfer_call (and a send_dtmf) nobody offered; afterwards it answers with what the tools said. */
class RogueModel implements ChatModel {
  readonly requests: ChatRequest[] = [];
  async *stream(req: ChatRequest): AsyncIterable<ChatEvent> {
    this.requests.push(structuredClone(req));
    if (this.requests.length === 1) {
      yield { type: "tool_call", call: { id: "x1", name: "transfer_call", arguments: { destination: ELSEWHERE, mode: "cold" } } };
      yield { type: "tool_call", call: { id: "x2", name: "send_dtmf", arguments: { digits: "9" } } };
      return;
    }
    const results = req.messages.filter((m) => m.role === "tool").map((m) => m.content);
    yield { type: "text", text: `Results: ${results.join(" | ")}` };
  }
}

describe("an action the node does not offer", () => {
  it("a transfer_call the model makes at a node without it is refused: nothing is dialed, the model is told", async () => {
    const model = new RogueModel();
    const agent = new ConversationAgent(new Conversation(DEF, {}), {
      model,
      stt: { transcribe: async () => "" },
      tts: { synthesize: async () => ({ samples: new Int16Array(80), rate: 8000 }) },
    });
    const transfers: TransferRequest[] = [];
    const keys: string[] = [];
    let hangups = 0;
    const controls: AgentControls = {
      say: () => {},
      mark: (name) => void setTimeout(() => agent.onMark(name), 1),
      clear: () => [],
      transfer: async (r) => {
        transfers.push(r);
        return "connected";
      },
      sendDtmf: async (d) => void keys.push(d),
      hangup: () => void hangups++,
      machine: () => {},
      log: () => {},
      now: () => 0,
      wallNow: () => 0,
      save: () => {},
    };
    await agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000 }, controls);
    await sleep(10);
    // Keys no edge waits for, ended by #, are the callee's turn: the model is asked.
    agent.onDtmf("5", 100);
    agent.onDtmf("#", 100);
    for (let i = 0; i < 100 && model.requests.length < 2; i++) await sleep(5);
    await sleep(20);

    // Neither tool was on offer, so neither was carried out.
    expect(model.requests[0].tools.map((t) => t.name)).toEqual(["done"]);
    expect(transfers).toEqual([]);
    expect(keys).toEqual([]);
    expect(hangups).toBe(0);
    // The model was asked again with each refusal as the tool's result; the call is still at its node.
    expect(model.requests).toHaveLength(2);
    const results = model.requests[1].messages.filter((m) => m.role === "tool");
    expect(results).toEqual([
      { role: "tool", toolCallId: "x1", content: "Not done: no action named transfer_call here" },
      { role: "tool", toolCallId: "x2", content: "Not done: no action named send_dtmf here" },
    ]);
    expect(agent.conversation.nodeId).toBe("s");
    expect(agent.conversation.path).toEqual(["s"]);
  });
});
