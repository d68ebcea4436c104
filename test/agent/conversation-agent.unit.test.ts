// The conversation agent on its own, with fake controls (marks heard at once) and engines the test holds back: a
// slow model gets a filler once, then the reply follows it; noise is not a turn.
import { describe, expect, it } from "vitest";
import type { ChatEvent, ChatModel } from "../../src/agent/chat";
import { ConversationAgent, DEFAULT_TURN_SETTINGS } from "../../src/agent/conversation-agent";
import { Conversation } from "../../src/agent/graph";
import { MACHINE_SPEECH_MS } from "../../src/agent/voicemail";
import type { AgentControls, Turn } from "../../src/agent/voice-agent";

const DEF = { nodes: [{ id: "s", type: "startCall", data: { prompt: "Help.", greeting: "Hi!" } }], edges: [] };
const tick = () => new Promise((r) => setTimeout(r, 0));

/**
 * Controls that log turns (and whatever `extra` does), on a clock the test drives 20 ms a frame with `feed`: the
 * frames' audio clock and the wall clock the session ticks the agent with move together here, as on a real call.
 */
function fakeCall(agent: ConversationAgent, turns: Turn[], extra: Partial<AgentControls> = {}) {
  let clock = 0;
  const controls: AgentControls = {
    say: () => {},
    mark: () => {},
    clear: () => [],
    transfer: async () => "unsupported",
    sendDtmf: async () => {},
    hangup: () => {},
    machine: () => {},
    log: (t) => turns.push(t),
    now: () => clock,
    wallNow: () => clock,
    save: () => {},
    ...extra,
  };
  const feed = async (frames: number, voiced: boolean) => {
    for (let i = 0; i < frames; i++) {
      clock += 20;
      agent.onAudio({ samples: new Int16Array(160), rate: 8000, atMs: clock, voiced });
      agent.onTick(clock);
      await tick();
    }
  };
  return { controls, feed };
}

function harness(transcript: string) {
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  let asked = 0;
  const model: ChatModel = {
    async *stream(): AsyncIterable<ChatEvent> {
      asked++;
      await gate;
      yield { type: "text", text: "Sure thing." };
    },
  };
  const said: string[] = [];
  const turns: Turn[] = [];
  const agent = new ConversationAgent(new Conversation(DEF, {}), {
    model,
    stt: { transcribe: async () => transcript },
    tts: {
      synthesize: async (text) => {
        said.push(text);
        return { samples: new Int16Array(160), rate: 8000 };
      },
    },
  });
  const { controls, feed } = fakeCall(agent, turns, { mark: (name) => queueMicrotask(() => agent.onMark(name)) });
  return { agent, controls, said, turns, feed, release, asked: () => asked };
}

describe("the conversation agent's turn-taking", () => {
  it("a slow model: after fillerAfterMs of waiting the agent says a filler once, and the reply follows it in the same turn", async () => {
    const h = harness("Can you help me?");
    await h.agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000 }, h.controls);
    await h.feed(2, false);
    expect(h.said).toEqual(["Hi!"]);
    await h.feed(25, true); // half a second of speech
    await h.feed(DEFAULT_TURN_SETTINGS.endOfTurnMs / 20, false); // the end of the turn
    expect(h.asked()).toBe(1);
    await h.feed(DEFAULT_TURN_SETTINGS.fillerAfterMs / 20 - 1, false);
    expect(h.said).toEqual(["Hi!"]);
    await h.feed(2, false);
    expect(h.said).toEqual(["Hi!", DEFAULT_TURN_SETTINGS.fillerText]);
    await h.feed(100, false); // still waiting: no second filler
    expect(h.said).toEqual(["Hi!", DEFAULT_TURN_SETTINGS.fillerText]);
    h.release();
    await h.feed(3, false);
    expect(h.said).toEqual(["Hi!", DEFAULT_TURN_SETTINGS.fillerText, "Sure thing."]);
    expect(h.turns.map((t) => [t.role, t.text])).toEqual([
      ["agent", "Hi!"],
      ["callee", "Can you help me?"],
      ["agent", `${DEFAULT_TURN_SETTINGS.fillerText} Sure thing.`],
    ]);
    // The model's history has its own words, not the filler.
    expect(h.agent.conversation.history.map((m) => m.content)).toEqual(["Hi!", "Can you help me?", "Sure thing."]);
  });

  it("voiced audio too short to be speech is not a turn; a turn transcribed as nothing gets no reply", async () => {
    const short = harness("ignored");
    await short.agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000 }, short.controls);
    await short.feed(5, true); // 100 ms: a click
    await short.feed(40, false);
    expect(short.asked()).toBe(0);

    const noise = harness("");
    await noise.agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000 }, noise.controls);
    await noise.feed(25, true);
    await noise.feed(40, false);
    expect(noise.asked()).toBe(0);
    expect(noise.turns.map((t) => t.role)).toEqual(["agent"]);
  });

  it("a streaming engine: the turn's audio is pushed as it is spoken and finished at its end; speech plays piece by piece", async () => {
    const pushed: number[] = [];
    let opened = 0;
    let finished = 0;
    let aborted = 0;
    const said: number[] = [];
    const turns: Turn[] = [];
    let release: () => void = () => {};
    const noGreeting = { nodes: [{ id: "s", type: "startCall", data: { prompt: "Help." } }], edges: [] };
    const agent = new ConversationAgent(new Conversation(noGreeting, {}), {
      model: {
        async *stream(): AsyncIterable<ChatEvent> {
          yield { type: "text", text: "Sure thing." };
        },
      },
      stt: {
        transcribe: async () => {
          throw new Error("a streaming engine is not asked per turn");
        },
        open: () => {
          opened++;
          return {
            push: (samples) => pushed.push(samples.length),
            finish: async () => {
              finished++;
              return "Can you help me?";
            },
            abort: () => aborted++,
          };
        },
      },
      tts: {
        synthesize: async () => {
          throw new Error("a streaming engine is not asked for whole sentences");
        },
        async *stream(text) {
          // Two pieces; the second only once the test lets it come.
          yield { samples: new Int16Array(80), rate: 8000 };
          if (text.includes("Sure")) {
            await new Promise<void>((r) => {
              release = r;
            });
          }
          yield { samples: new Int16Array(40), rate: 8000 };
        },
      },
    });
    const marks: string[] = [];
    const { controls, feed } = fakeCall(agent, turns, { say: (samples) => said.push(samples.length), mark: (name) => marks.push(name) });
    await agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000 }, controls);
    await tick();
    // No greeting: the model opens ("Sure thing."), its first piece plays before the second exists.
    expect(said).toEqual([80]);
    expect(marks).toEqual([]);
    release();
    await feed(2, false);
    expect(said).toEqual([80, 40]);
    expect(marks).toHaveLength(1);
    agent.onMark(marks[0]);
    // A noise burst opens a stream and drops it; a real turn streams every frame, silence to its end included.
    await feed(5, true);
    await feed(DEFAULT_TURN_SETTINGS.endOfTurnMs / 20, false);
    expect([opened, aborted, finished]).toEqual([1, 1, 0]);
    pushed.length = 0;
    await feed(25, true);
    await feed(DEFAULT_TURN_SETTINGS.endOfTurnMs / 20, false);
    expect([opened, finished]).toEqual([2, 1]);
    expect(pushed).toHaveLength(25 + DEFAULT_TURN_SETTINGS.endOfTurnMs / 20);
    expect(turns.map((t) => [t.role, t.text])).toContainEqual(["callee", "Can you help me?"]);
    // The reply's first piece plays; the callee talks over it (long enough to pause it) before the second exists:
    // nothing more is played while their words are not known.
    await feed(1, false);
    expect(said).toEqual([80, 40, 80]);
    await feed(DEFAULT_TURN_SETTINGS.interruptMinMs / 20, true);
    release();
    await feed(3, false);
    expect(said).toEqual([80, 40, 80]);
  });

  it("a live transcription that fails mid-turn: the turn is transcribed whole instead", async () => {
    const h = harness("Can you help me?");
    const stt = (h.agent as unknown as { engines: { stt: Record<string, unknown> } }).engines.stt;
    stt.open = () => ({ push: () => {}, finish: async () => Promise.reject(new Error("socket closed (1011)")), abort: () => {} });
    await h.agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000 }, h.controls);
    await h.feed(25, true);
    await h.feed(DEFAULT_TURN_SETTINGS.endOfTurnMs / 20 + 1, false);
    expect(h.turns.map((t) => [t.role, t.text])).toContainEqual(["callee", "Can you help me?"]);
    expect(h.asked()).toBe(1);
  });
});

/** An agent whose model streams `parts` (each awaiting the test's `next()` after the first) and whose marks wait for the test. */
function streaming(parts: string[], settings = DEFAULT_TURN_SETTINGS) {
  const gates: Array<() => void> = [];
  const model: ChatModel = {
    async *stream(): AsyncIterable<ChatEvent> {
      for (const [i, text] of parts.entries()) {
        if (i > 0) await new Promise<void>((r) => gates.push(r));
        yield { type: "text", text };
      }
    },
  };
  const said: string[] = [];
  const turns: Turn[] = [];
  const marks: string[] = [];
  const ended: string[] = [];
  let clears = 0;
  let machine = 0;
  const agent = new ConversationAgent(
    new Conversation(DEF, {}),
    {
      model,
      stt: { transcribe: async () => "Can you help me?" },
      tts: {
        synthesize: async (text) => {
          said.push(text);
          return { samples: new Int16Array(160), rate: 8000 };
        },
      },
    },
    settings,
  );
  const { controls, feed } = fakeCall(agent, turns, {
    mark: (name) => marks.push(name),
    clear: () => {
      clears++;
      return [];
    },
    hangup: (reason) => ended.push(reason ?? ""),
    machine: () => machine++,
  });
  const next = async () => {
    gates.shift()?.();
    await tick();
    await tick();
  };
  /** The callee hears every mark placed so far. */
  const hearAll = () => {
    for (const m of marks.splice(0)) agent.onMark(m);
  };
  return { agent, controls, feed, said, turns, next, hearAll, ended, clears: () => clears, machine: () => machine };
}

describe("the conversation agent's reply and barge-in", () => {
  it("speaks each sentence as soon as the model has streamed it, before the rest of the reply exists", async () => {
    const h = streaming(["Sure, I can help. ", "What is your ", "name? And your ", "company?"]);
    await h.agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000 }, h.controls);
    h.hearAll();
    await h.feed(25, true);
    await h.feed(DEFAULT_TURN_SETTINGS.endOfTurnMs / 20, false);
    await tick();
    // Only the first piece has arrived: its sentence is already being spoken.
    expect(h.said).toEqual(["Hi!", "Sure, I can help."]);
    await h.next();
    expect(h.said).toEqual(["Hi!", "Sure, I can help."]); // "What is your" is no sentence yet
    await h.next();
    expect(h.said).toEqual(["Hi!", "Sure, I can help.", "What is your name?"]);
    await h.next();
    expect(h.said).toEqual(["Hi!", "Sure, I can help.", "What is your name?", "And your company?"]);
  });

  it("the callee's voice over the agent pauses it at interruptMinMs; their words take the turn, and what was not heard leaves the history", async () => {
    const h = streaming(["Our offer has three parts. ", "The first is price. ", "The second is support."]);
    await h.agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000 }, h.controls);
    h.hearAll();
    await h.feed(25, true);
    await h.feed(DEFAULT_TURN_SETTINGS.endOfTurnMs / 20, false);
    await h.next();
    await h.next();
    expect(h.said.slice(1)).toEqual(["Our offer has three parts.", "The first is price.", "The second is support."]);
    // The callee heard the first sentence, then speaks: a cough's worth changes nothing, interruptMinMs pauses it.
    h.agent.onMark("say-2");
    await h.feed(DEFAULT_TURN_SETTINGS.interruptMinMs / 20 - 1, true);
    expect(h.clears()).toBe(0);
    await h.feed(1, true);
    expect(h.clears()).toBe(1);
    // Their words (not a backchannel) take the turn: the second sentence (20 ms of audio) had played by the clock.
    await h.feed(DEFAULT_TURN_SETTINGS.endOfTurnMs / 20, false);
    expect(h.turns.find((t) => t.interrupted)).toMatchObject({ role: "agent", text: "Our offer has three parts. The first is price." });
    expect(h.agent.conversation.history.slice(0, 4).map((m) => [m.role, m.content])).toEqual([
      ["assistant", "Hi!"],
      ["user", "Can you help me?"],
      ["assistant", "Our offer has three parts. The first is price."],
      ["user", "Can you help me?"],
    ]);
  });

  it("a first utterance longer than a person's answer (no machine words) is an answering machine: hung up, model not asked", async () => {
    const h = streaming(["Hello."]);
    await h.agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000, voicemail: "hang_up" }, h.controls);
    h.hearAll();
    await h.feed(MACHINE_SPEECH_MS / 20 + 5, true);
    await h.feed(DEFAULT_TURN_SETTINGS.endOfTurnMs / 20 + 2, false);
    expect(h.machine()).toBe(1);
    expect(h.ended).toEqual(["voicemail"]);
    expect(h.agent.outcome().note).toContain("answering machine");
    expect(h.agent.outcome().usage.inputTokens).toBe(0);
    // A person's short answer is not one.
    const person = streaming(["Hello."]);
    await person.agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000 }, person.controls);
    person.hearAll();
    await person.feed(MACHINE_SPEECH_MS / 20 - 50, true);
    await person.feed(DEFAULT_TURN_SETTINGS.endOfTurnMs / 20 + 2, false);
    expect(person.machine()).toBe(0);
  });

  it("leave_message: a machine that never stops talking is hung up on at maxMachineMs without a message", async () => {
    const settings = { ...DEFAULT_TURN_SETTINGS, maxMachineMs: 8000 };
    const h = streaming(["Hello."], settings);
    await h.agent.onStart({ runId: 1, variables: {}, greeting: null, rate: 8000, voicemail: "leave_message" }, h.controls);
    h.hearAll();
    await h.feed(MACHINE_SPEECH_MS / 20 + 5, true);
    await h.feed(DEFAULT_TURN_SETTINGS.endOfTurnMs / 20 + 2, false);
    expect(h.machine()).toBe(1);
    expect(h.ended).toEqual([]);
    // The machine talks on (no quiet for its tone) until the limit, counted from the end of its first utterance
    // (the end-of-turn wait and two frames ago).
    const since = DEFAULT_TURN_SETTINGS.endOfTurnMs + 2 * 20;
    await h.feed((settings.maxMachineMs - since) / 20 - 5, true);
    expect(h.ended).toEqual([]);
    await h.feed(10, true);
    expect(h.ended).toEqual(["voicemail"]);
    expect(h.said).toEqual(["Hi!"]); // no message
  });
});
