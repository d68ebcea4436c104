// Words heard while the caller speaks decide an interruption, on each engine that gives them: Flux on Workers AI (faked
// at the binding), Flux on Deepgram's own API and Nova's interim results there (the stand-in in Node, with the words
// scripted for the test's key; smart-turn on the binding ends Nova's turns).
import { describe, expect, it } from "vitest";
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import { WORKERS_AI_TTS_MODEL, WORKERS_AI_TURN_MODEL } from "../../src/agent/workers-ai-speech";
import type { CalleeStream } from "../../src/dev/simulator/media/callee";
import { isVoiced } from "../../src/lib/audio/level";
import { fluxSocket } from "./flux-support";
import { fakeAiCall, listenLive, transcriptWhen } from "./conversation-support";
import { key, keyedCall, script } from "./keyed-speech-support";

const FLUX = "@cf/deepgram/flux";
const LONG = "The conference runs for three days in Lisbon, with talks on every kind of voice agent you can imagine.";
/** Flux's first update of a turn comes after this much voice (it sends one about every 250 ms of audio). */
const UPDATE_FRAMES = 10;

/** The stand-in voice's length: 60 ms of audio per character of text. */
const TTS_MS_PER_CHAR = 60;

class FakeAi {
  readonly chats: string[] = [];
  /** What the caller says in the utterance under way: Flux's transcript for it (empty: noise, no words). */
  saying = "";
  /** What they say in the utterance after their first (Workers AI's Flux takes it once the reply plays). */
  next = "";

  async run(model: string, inputs: Record<string, any>, options?: Record<string, unknown>): Promise<unknown> {
    if (model === WORKERS_AI_CHAT_MODEL) {
      const msgs = inputs.messages as { role: string; content: string | null }[];
      const last = String([...msgs].reverse().find((m) => m.role === "user")?.content ?? "");
      this.chats.push(last);
      const response = last.includes("stop") ? "Sorry, go ahead." : LONG;
      return new Response(`data: ${JSON.stringify({ response })}\n\ndata: [DONE]\n\n`).body!;
    }
    if (model === WORKERS_AI_TTS_MODEL)
      return new Uint8Array(new Int16Array((16000 * TTS_MS_PER_CHAR * inputs.text.length) / 1000).map((_, i) => Math.round(4000 * Math.sin(i / 6))).buffer);
    if (model === FLUX && options?.websocket) return this.flux(Number(inputs.sample_rate));
    if (model === WORKERS_AI_TURN_MODEL) return { is_complete: true, probability: 0.9 };
    throw new Error(`no such model: ${model}`);
  }

  /** Flux per utterance: an Update with the words so far every UPDATE_FRAMES voiced frames, EndOfTurn after 300 ms quiet. */
  private flux(rate: number): Response {
    const frame = rate / 50;
    let [voiced, quietMs, ended] = [0, 0, false];
    return fluxSocket((chunk, flux) => {
      const send = (event: string) => flux.send(event, voiced >= UPDATE_FRAMES ? this.saying : "");
      for (let i = 0; i + frame <= chunk.length && !ended; i += frame) {
        if (isVoiced(chunk.subarray(i, i + frame))) {
          [voiced, quietMs] = [voiced + 1, 0];
          if (voiced === 1) send("StartOfTurn");
          if (voiced % UPDATE_FRAMES === 0) send("Update");
        } else if (voiced) {
          quietMs += 20;
          if (quietMs < 300 || !this.saying) continue;
          ended = true;
          send("EndOfTurn");
        }
      }
    });
  }
}

/** Voice-like sound for `ms` (a 200 Hz buzz), or noise (a cough). */
const buzz = (ms: number, noise = false) =>
  Int16Array.from({ length: ms * 8 }, (_, i) =>
    noise ? Math.round((Math.random() * 2 - 1) * 9000) : Math.round(7000 * Math.sin((2 * Math.PI * 200 * i) / 8000)),
  );

/** The caller speaks in real time (a frame every 20 ms of the wall clock). Returns ms of their voice sent when the first clear came (null: none). */
async function talkLive(callee: CalleeStream, samples: Int16Array): Promise<number | null> {
  const start = Date.now();
  let clearAt: number | null = null;
  for (let i = 0; i < samples.length; i += 160) {
    const wait = start + (i / 160) * 20 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    callee.speak(samples.subarray(i, i + 160));
    if (callee.clears && clearAt === null) clearAt = (i / 160 + 1) * 20;
  }
  return clearAt;
}

/**
 * No filler for a slow reply: beside a CPU hog the reply came after the 1.5 s that brings one, the caller's words then
 * cut the filler, not the reply, and the interrupted turn was the filler's (hog run on 2026-11-29).
 */
const NO_FILLER = { filler_after_ms: 0 };

/** How the agent hears: `call` starts it with the caller's first words and those of the utterance the test makes next. */
type Path = {
  name: string;
  call(ai: FakeAi, next: string): Promise<{ runId: number; callee: CalleeStream }>;
  /**
   * How late (ms, on the call's clock) the words may come on top of the speech engine's own timing: none for the
   * binding's fake, in the session's runtime; for the stand-in in Node (the test process, which a busy machine slows)
   * the caller's 600 ms of voice, so the words still stop the reply before their turn could have ended on silence
   * (600 ms voice + the 700 ms end_of_turn_ms). Beside a CPU hog its words came when the voice had ended (900 ms).
   */
  wordsLateMs: number;
};
const PATHS: Path[] = [
  {
    name: "Flux on Workers AI",
    wordsLateMs: 0,
    call: async (ai, next) => {
      const call = await fakeAiCall(ai, { workflow_configurations: { voice_agent: { stt: { provider: "workers-ai", model: FLUX }, turn: NO_FILLER } } });
      ai.saying = "Tell me more.";
      ai.next = next;
      return call;
    },
  },
  ...(["flux-general-en", "nova-3"] as const).map((model) => ({
    name: `Deepgram ${model === "nova-3" ? "Nova (interim results)" : "Flux"} on the agent's own key`,
    wordsLateMs: 600,
    call: async (ai: FakeAi, next: string) => {
      const k = key();
      await script(k, ["Tell me more.", next]);
      return keyedCall(ai, { provider: "deepgram", api_key: k, model }, NO_FILLER);
    },
  })),
];

/** A call; the caller asks, and the agent's long reply has played for 1.5 s. */
async function longReply(ai: FakeAi, path: Path, next: string) {
  const { runId, callee } = await path.call(ai, next);
  const before = callee.received.length;
  await talkLive(callee, buzz(600));
  await listenLive(callee, () => callee.received.length >= before + 75, 5000); // 1.5 s of the reply
  ai.saying = ai.next;
  return { runId, callee };
}

describe.each(PATHS)("words heard while the caller speaks decide an interruption: $name", (path) => {
  it("an uh-huh over the agent never pauses it: no clear, the sentence plays whole, the model is not asked", async () => {
    const ai = new FakeAi();
    const { runId, callee } = await longReply(ai, path, "Uh-huh.");
    // 700 ms of voice: well past the 300 ms that pauses the agent on voice alone.
    expect(await talkLive(callee, buzz(700))).toBeNull();
    const turns = await transcriptWhen(runId, callee, (t) => t.some((x) => x.role === "agent" && x.text === LONG));
    // Words that come while the caller speaks (the binding's fake, in the session's runtime): no pause at all. The
    // stand-in's may come as late as wordsLateMs: past the 700 ms that pause on voice alone (a CPU hog's run, on
    // 2026-11-29), the agent pauses once and the backchannel resumes it (a false interruption). Either way the
    // sentence plays whole, the "uh-huh" is the caller's turn and the model is not asked.
    expect(callee.clears).toBeLessThanOrEqual(path.wordsLateMs > 0 ? 1 : 0);
    expect(turns.map((t) => [t.role, t.text])).toContainEqual(["callee", "Uh-huh."]);
    expect(turns.filter((t) => t.role === "agent").map((t) => t.text)).toContain(LONG);
    expect(ai.chats).toEqual(["Tell me more."]);
  });

  it("real words stop it as soon as they are heard, and take the turn with what was heard of the reply", async () => {
    const ai = new FakeAi();
    const { runId, callee } = await longReply(ai, path, "Wait, stop.");
    // 600 ms of voice: less than voice without words needs to stop the agent (the 300 ms minimum + 400 ms waiting for
    // words; the cough below), so only the words can stop it while they speak (else it stops when their turn ends).
    const clearAt = await talkLive(callee, buzz(600));
    const turns = await transcriptWhen(runId, callee, (t) => t.some((x) => x.role === "agent" && x.text === "Sorry, go ahead."));
    const cut = turns.find((t) => t.role === "agent" && (t as { interrupted?: boolean }).interrupted)!;
    const wait = turns.find((t) => t.role === "callee" && t.text === "Wait, stop.")!;
    expect(LONG.startsWith(cut.text), JSON.stringify(turns)).toBe(true);
    expect(turns.map((t) => [t.role, t.text])).toContainEqual(["callee", "Wait, stop."]);
    expect(ai.chats).toEqual(["Tell me more.", "Wait, stop."]);
    // Where the reply stopped, on the call's own clocks (a busy machine's late frames do not move it): its start plus
    // what played of it (all its audio but the part cut), from the caller's first voiced frame. The first update (200
    // ms of voice) names words that are not a backchannel: stopped before voice alone would have (700 ms); never
    // before the 300 ms minimum, which the caller's clock (only ever late) shows.
    const stoppedAt = cut.startMs + (LONG.length * TTS_MS_PER_CHAR - cut.timing!.cut_ms!) - wait.startMs;
    expect(stoppedAt).toBeLessThan(700 + path.wordsLateMs);
    expect(callee.clears).toBeGreaterThan(0);
    expect(clearAt ?? 600).toBeGreaterThanOrEqual(300);
  });

  it("a cough (voice, no words) shorter than the wait for words does not pause it", async () => {
    const ai = new FakeAi();
    const { runId, callee } = await longReply(ai, path, "");
    expect(await talkLive(callee, buzz(500, true))).toBeNull();
    const turns = await transcriptWhen(runId, callee, (t) => t.some((x) => x.role === "agent" && x.text === LONG));
    expect(callee.clears).toBe(0);
    expect(turns.filter((t) => (t as { interrupted?: boolean }).interrupted)).toEqual([]);
    expect(ai.chats).toEqual(["Tell me more."]);
  });
});
