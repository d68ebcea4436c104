// TurnEnds on an engine without turn events but with words while the caller speaks (Deepgram's Nova): the reply's
// model request starts ahead at a short pause (REPLY_AHEAD_PAUSE_MS), before smart-turn is asked at its own pause
// (TURN_MODEL_PAUSE_MS), so the model's first token is not held behind the verdict. The short pause is edgedial's own
// wait on every reply's path (bench/voice): three quiet frames, 60 ms.
import { describe, expect, it } from "vitest";
import type { ChatEvent, ChatModel, ChatRequest } from "../../src/agent/chat";
import type { Speech, SpeechStream, SpeechToText, TextToSpeech } from "../../src/agent/speech";
import { REPLY_AHEAD_PAUSE_MS, TURN_MODEL_PAUSE_MS, TurnEnds } from "../../src/agent/turn-ends";
import { TurnDetector } from "../../src/agent/turn-detector";

const FRAME = new Int16Array(160);

/** One call's turn-ending machinery on fakes; every model request and smart-turn question noted with the frame's time. */
function setup() {
  let clock = 0;
  let words = "";
  const asked: { words: string; atMs: number }[] = [];
  const judged: number[] = [];
  const model: ChatModel = {
    async *stream(request: ChatRequest): AsyncIterable<ChatEvent> {
      asked.push({ words: String(request.messages.at(-1)?.content ?? ""), atMs: clock });
      yield { type: "text", text: "Sure." };
    },
  };
  const stt: SpeechToText = {
    transcribe: async () => words,
    endOfTurn: async () => {
      judged.push(clock);
      return false;
    },
  };
  const tts: TextToSpeech = { synthesize: async (): Promise<Speech> => ({ samples: new Int16Array(8), rate: 8000 }) };
  const turns = new TurnDetector(700);
  const ends = new TurnEnds({ model, stt, tts }, turns, {
    now: () => clock,
    endOfTurn: () => {},
    request: () => ({ messages: [{ role: "system", content: "Be brief." }], tools: [] }),
  });
  const stream: SpeechStream = { push() {}, finish: async () => words, abort() {}, words: () => words };
  let watched = false;
  /** `ms` of the caller: voiced or quiet frames, each handed to the detector and then to TurnEnds (as the agent does). */
  const run = (ms: number, voiced: boolean) => {
    for (let t = 0; t < ms; t += 20) {
      clock += 20;
      const ev = turns.push(FRAME, clock, voiced);
      if (ev?.kind === "start" && !watched) {
        watched = true;
        ends.watch(stream, () => stream);
      }
      ends.frame(clock, 8000);
    }
  };
  return { run, asked, judged, setWords: (w: string) => (words = w), ends };
}

describe("TurnEnds: the reply starts ahead at a shorter pause than smart-turn's", () => {
  it("the model is asked on the words so far at the short pause, smart-turn at the longer one, each once", () => {
    expect(REPLY_AHEAD_PAUSE_MS).toBeLessThan(TURN_MODEL_PAUSE_MS);
    const s = setup();
    s.run(600, true);
    const lastVoice = 600;
    s.setWords("I have a question");
    s.run(400, false);
    s.ends.stop();
    expect(s.asked.map((a) => [a.words, a.atMs - lastVoice])).toEqual([["I have a question", REPLY_AHEAD_PAUSE_MS]]);
    expect(s.judged.map((at) => at - lastVoice)).toEqual([TURN_MODEL_PAUSE_MS]);
  });

  it("the reply's model is asked by the third quiet frame (60 ms), not a frame later", () => {
    const s = setup();
    s.run(600, true);
    s.setWords("I have a question");
    s.run(40, false);
    expect(s.asked).toEqual([]); // two quiet frames: a stop between words, not yet a pause
    s.run(20, false);
    s.ends.stop();
    expect(s.asked.map((a) => [a.words, a.atMs - 600])).toEqual([["I have a question", 60]]);
  });

  it("words that moved on by smart-turn's pause are asked again; a new pause with the same words is not", () => {
    const s = setup();
    s.run(400, true);
    s.setWords("I have");
    s.run(120, false); // the short pause: asked on "I have"
    s.setWords("I have a question");
    s.run(100, false); // smart-turn's pause: the words moved on
    s.run(200, true);
    s.run(300, false); // another pause, the same words: smart-turn asked again, the model not
    s.ends.stop();
    expect(s.asked.map((a) => [a.words, a.atMs])).toEqual([
      ["I have", 400 + REPLY_AHEAD_PAUSE_MS],
      ["I have a question", 400 + TURN_MODEL_PAUSE_MS],
    ]);
    expect(s.judged).toEqual([400 + TURN_MODEL_PAUSE_MS, 820 + TURN_MODEL_PAUSE_MS]);
  });

  it("no words yet (none given while the caller speaks) starts nothing ahead; smart-turn is still asked", () => {
    const s = setup();
    s.run(400, true);
    s.run(300, false);
    s.ends.stop();
    expect(s.asked).toEqual([]);
    expect(s.judged).toEqual([400 + TURN_MODEL_PAUSE_MS]);
  });
});
