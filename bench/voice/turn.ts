// The voice agent's turn path in Node, with its engines stubbed at fixed latencies: from the frame that ends the
// callee's turn to the agent's first audio, minus the stubs' own latencies, is the time edgedial adds (the energy
// gate, the graph, the reply runner, the sentence splitter, queuing the speech).
import type { ChatEvent, ChatModel } from "../../src/agent/chat";
import { ConversationAgent, DEFAULT_TURN_SETTINGS } from "../../src/agent/conversation-agent";
import { Conversation } from "../../src/agent/graph";
import type { SpeechToText, TextToSpeech } from "../../src/agent/speech";
import type { AgentControls } from "../../src/agent/voice-agent";

export type Latencies = { sttMs: number; firstTokenMs: number; ttsMs: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const DEFINITION = {
  nodes: [{ id: "start", type: "startCall", data: { prompt: "Help {{first_name}} with their question.", greeting: "Hi {{first_name}}!" } }],
  edges: [],
};

function engines(l: Latencies) {
  const model: ChatModel = {
    async *stream(): AsyncIterable<ChatEvent> {
      await sleep(l.firstTokenMs);
      for (const t of ["Sure", ", ", "I ", "can ", "help. ", "What ", "do ", "you ", "need?"]) yield { type: "text", text: t };
    },
  };
  const stt: SpeechToText = { transcribe: async () => (await sleep(l.sttMs), "I have a question.") };
  const samples = new Int16Array(16000);
  const tts: TextToSpeech = { synthesize: async () => (await sleep(l.ttsMs), { samples, rate: 16000 }) };
  return { model, stt, tts };
}

/** One call's turn: resolves with the milliseconds from the end of the callee's turn to the agent's first audio. */
export async function oneTurn(l: Latencies): Promise<number> {
  let clock = 0;
  let endAt = 0;
  let firstSay: (ms: number) => void = () => {};
  const first = new Promise<number>((r) => (firstSay = r));
  let turnEnded = false;
  const agent = new ConversationAgent(new Conversation(DEFINITION, { first_name: "Ada" }), engines(l));
  const controls: AgentControls = {
    say: () => {
      if (turnEnded) firstSay(performance.now() - endAt);
    },
    // Played at once: the bench measures the path to the first audio, not the audio's length.
    mark: (name) => queueMicrotask(() => agent.onMark(name)),
    clear: () => [],
    transfer: async () => "failed",
    sendDtmf: async () => {},
    hangup: () => {},
    machine: () => {},
    log: () => {},
    now: () => clock,
    wallNow: () => performance.now(),
    save: () => {},
  };
  await agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000 }, controls);
  await sleep(l.ttsMs + 5); // the greeting is spoken (and heard) first
  const frame = new Int16Array(160);
  const feed = (voiced: boolean) => {
    clock += 20;
    agent.onAudio({ samples: frame, rate: 8000, atMs: clock, voiced });
  };
  for (let i = 0; i < 50; i++) feed(true);
  // Silence until the end of the turn: the frame that completes the end-of-turn wait starts the reply.
  const quietFrames = DEFAULT_TURN_SETTINGS.endOfTurnMs / 20;
  for (let i = 1; i < quietFrames; i++) feed(false);
  turnEnded = true;
  endAt = performance.now();
  feed(false);
  return first;
}
