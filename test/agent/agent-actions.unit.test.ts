// The conversation agent carrying out actions, with fake controls (marks heard at once): a key press takes a key edge
// into a warm transferCall node; the agent says the message, writes the summary with the model and speaks it, hands
// over, and stops once connected; when nobody answers the caller is told and the conversation goes on.
import { describe, expect, it } from "vitest";
import { ConversationAgent } from "../../src/agent/conversation-agent";
import { Conversation } from "../../src/agent/graph";
import { ScriptedModel } from "../../src/agent/scripted-model";
import type { AgentControls, TransferOutcome, TransferRequest, Turn } from "../../src/agent/voice-agent";

const DEF = {
  nodes: [
    { id: "s", type: "startCall", data: { prompt: "Help.", greeting: "Hi!" } },
    { id: "t", type: "transferCall", data: { destination: "+15550100", mode: "warm", message: "Connecting you.", whisper_prompt: "Brief the colleague." } },
    { id: "later", type: "agentNode", data: { prompt: "Offer a call back." } },
  ],
  edges: [
    { id: "st", source: "s", target: "t", data: { label: "person", dtmf: "0" } },
    { id: "tl", source: "t", target: "later", data: { on: "no_answer" } },
  ],
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function run(outcome: TransferOutcome) {
  const turns: Turn[] = [];
  const said: string[] = [];
  const requests: TransferRequest[] = [];
  let hangups = 0;
  const model = new ScriptedModel([
    { prompt: "Brief the colleague", say: "Ada would like to speak with sales." },
    { prompt: "Offer a call back", say: "Shall we call you back?" },
  ]);
  const agent: ConversationAgent = new ConversationAgent(new Conversation(DEF, {}), {
    model,
    stt: { transcribe: async () => "" },
    tts: {
      synthesize: async (text) => {
        said.push(text);
        return { samples: new Int16Array(80), rate: 8000 };
      },
    },
  });
  let clock = 0;
  const controls: AgentControls = {
    say: () => {},
    mark: (name) => void setTimeout(() => agent.onMark(name), 1),
    clear: () => [],
    transfer: async (r) => {
      requests.push(r);
      return outcome;
    },
    sendDtmf: async () => {},
    hangup: () => void hangups++,
    machine: () => {},
    log: (t) => turns.push(t),
    now: () => clock,
    wallNow: () => clock,
    save: () => {},
  };
  return { agent, controls, turns, said, requests, hangups: () => hangups, tick: (ms: number) => (clock += ms) };
}

describe("the agent's actions on a call", () => {
  it("a key press takes the key edge; a warm transfer says the message, then hands over with a written and spoken summary", async () => {
    const c = run("connected");
    await c.agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000 }, c.controls);
    await sleep(10);
    c.tick(100);
    c.agent.onDtmf("0", 100);
    for (let i = 0; i < 50 && !c.requests.length; i++) await sleep(5);
    expect(c.requests).toHaveLength(1);
    expect(c.requests[0]).toMatchObject({ destination: "+15550100", mode: "warm", timeoutSeconds: 30, summary: "Ada would like to speak with sales." });
    expect(c.requests[0].summaryAudio?.samples.length).toBe(80);
    expect(c.said).toEqual(["Hi!", "Connecting you.", "Ada would like to speak with sales."]);
    await sleep(10);
    expect(c.turns.map((t) => `${t.role}: ${t.text}`)).toEqual([
      "agent: Hi!",
      "callee: [pressed 0]",
      "agent: Connecting you.",
      expect.stringMatching(/^tool: transfer_call: ok \(\d+ ms\)$/),
    ]);
    expect(c.hangups()).toBe(0);
    expect(c.agent.outcome().toolCalls).toEqual([
      expect.objectContaining({ name: "transfer_call", arguments: { destination: "+15550100", mode: "warm" }, status: "ok" }),
    ]);
    // Connected: the agent says nothing more, whatever comes.
    c.agent.onDtmf("1", 200);
    await sleep(10);
    expect(c.said).toHaveLength(3);
  });

  it("nobody answers: the caller is told, and the model goes on at the no-answer edge's node", async () => {
    const c = run("no_answer");
    await c.agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000 }, c.controls);
    await sleep(10);
    c.agent.onDtmf("0", 100);
    for (let i = 0; i < 50 && c.said.length < 5; i++) await sleep(5);
    expect(c.said).toEqual([
      "Hi!",
      "Connecting you.",
      "Ada would like to speak with sales.",
      "I'm sorry, nobody was able to pick up right now.",
      "Shall we call you back?",
    ]);
    expect(c.agent.conversation.nodeId).toBe("later");
    expect(c.agent.outcome().toolCalls?.[0]).toMatchObject({ status: "error", error: "no_answer" });
  });
});
