// The deployed voice agent's path, with nothing prepared: the deployment's VOICE_AGENT (wrangler.jsonc:
// "conversation") picks the conversation agent, and the agent's settings (none: the defaults) pick its engines, the
// real Workers AI classes on the AI binding. Workers AI is faked at the binding boundary only: the binding answers
// the chat model in its streamed wire shape (keyed by the conversation, as the seats script is), speaks each sentence
// as PCM, and transcribes each turn over the Deepgram live socket it opens for `websocket: true`, recognizing the
// callee's committed clips. Every other conversation test prepares deterministic engines (`scripted`) instead.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { parse } from "jsonc-parser";
import { describe, expect, it } from "vitest";
import config from "../../wrangler.jsonc?raw";
import { ClipSpeechToText } from "../../src/agent/clip-speech";
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import { WORKERS_AI_STT_MODEL, WORKERS_AI_TTS_MODEL, WORKERS_AI_TURN_MODEL } from "../../src/agent/workers-ai-speech";
import { callSessionStub } from "../../src/calls/session/stub";
import { fromWire } from "../../src/dev/simulator/media/callee";
import { isVoiced } from "../../src/lib/audio/level";
import { readWav } from "../../src/lib/audio/wav";
import { runWhen, SCRIPT, SEATS, SEATS_DISPOSITIONS, SURE, seatsConversation, startSeatsCall } from "./conversation-support";
import { deepgramLiveSocket } from "./flux-support";
import { connect } from "./media-support";
import { setup } from "./support";

const vars = (parse(config) as { vars: Record<string, string> }).vars;
const TTS_RATE = 16000;
/** The fake voice: a tone, 60 ms a character. */
const toneMs = (text: string) => 60 * Math.max(1, text.length);

type Msg = { role: string; content: string | null; tool_calls?: { function: { name: string } }[] };

/** Workers AI as the binding answers: the chat model streamed (server-sent events), Aura's PCM, Nova-3's live socket. */
class FakeWorkersAi {
  readonly asked: { model: string; options?: unknown }[] = [];
  readonly chats: Msg[][] = [];
  readonly spoken: string[] = [];
  readonly transcribed: string[] = [];
  private readonly recognizer = new ClipSpeechToText([SURE, SEATS]);

  async run(model: string, inputs: Record<string, any>, options?: Record<string, unknown>): Promise<unknown> {
    this.asked.push({ model, options });
    if (model === WORKERS_AI_CHAT_MODEL) return this.chat(inputs);
    if (model === WORKERS_AI_TTS_MODEL) return this.speak(inputs);
    if (model === WORKERS_AI_STT_MODEL && options?.websocket) return this.live(inputs);
    if (model === WORKERS_AI_STT_MODEL) {
      const w = readWav(new Uint8Array(await new Response(inputs.audio.body).arrayBuffer()));
      return { results: { channels: [{ alternatives: [{ transcript: await this.recognize(w.samples, w.rate) }] }] } };
    }
    throw new Error(`no such model: ${model}`);
  }

  /** The callee's clip heard in `samples`: the speech in it (the silence the live socket also got around it trimmed). */
  private async recognize(samples: Int16Array, rate: number): Promise<string> {
    const frame = rate / 50;
    const voiced: number[] = [];
    for (let i = 0; i + frame <= samples.length; i += frame) if (isVoiced(samples.subarray(i, i + frame))) voiced.push(i);
    const speech = voiced.length ? samples.subarray(voiced[0], voiced.at(-1)! + frame) : samples.subarray(0, 0);
    const text = await this.recognizer.transcribe({ samples: speech, rate: rate as 8000 });
    this.transcribed.push(text);
    return text;
  }

  /** The seats script's step for this request, as its wire shapes show it (the node's prompt, the tools offered). */
  private chat(inputs: Record<string, any>): ReadableStream {
    expect(inputs.stream).toBe(true);
    const messages = inputs.messages as Msg[];
    this.chats.push(structuredClone(messages));
    const system = messages[0]?.role === "system" ? String(messages[0].content) : "";
    const lastUser = String([...messages].reverse().find((m) => m.role === "user")?.content ?? "");
    const [last, previous] = [messages.at(-1), messages.at(-2)];
    const justCalled = last?.role === "tool" ? (previous?.tool_calls?.[0]?.function.name ?? null) : null;
    const tools = new Set(((inputs.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name));
    const step = SCRIPT.find(
      (s) =>
        (s.user === undefined || lastUser.toLowerCase().includes(String(s.user).toLowerCase())) &&
        (s.prompt === undefined || system.includes(s.prompt)) &&
        (!s.call || (tools.has(s.call.name) && s.call.name !== justCalled)),
    );
    const chunk = {
      response: step ? (step.say ?? "") : "Sorry?",
      tool_calls: step?.call ? [{ name: step.call.name, arguments: step.call.arguments ?? {} }] : [],
      usage: { prompt_tokens: 50, completion_tokens: 5 },
    };
    return new Response(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`).body!;
  }

  private speak(inputs: Record<string, any>): Uint8Array {
    expect(inputs).toMatchObject({ encoding: "linear16", container: "none", sample_rate: TTS_RATE, speaker: "asteria" });
    this.spoken.push(inputs.text);
    const n = (TTS_RATE * toneMs(inputs.text)) / 1000;
    const pcm = new Int16Array(n);
    for (let i = 0; i < n; i++) pcm[i] = Math.round(4000 * Math.sin((2 * Math.PI * 440 * i) / TTS_RATE));
    return new Uint8Array(pcm.buffer);
  }

  /** Deepgram's live protocol: at CloseStream the final results for all of it, then the close. */
  private live(inputs: Record<string, any>): Response {
    const rate = Number(inputs.sample_rate);
    return deepgramLiveSocket((samples) => this.recognize(samples, rate));
  }
}

describe("the deployed voice agent (engines from the agent's settings, Workers AI on the AI binding)", () => {
  it("holds the seats conversation: the model is asked with the callee's words, its replies are spoken to the callee", async () => {
    expect(vars.VOICE_AGENT).toBe("conversation");
    const s = await setup("twilio");
    // The seats agent with no voice_agent settings: the deployment's default engines.
    const { runId, agentId } = await startSeatsCall(s, { call_disposition_codes: SEATS_DISPOSITIONS });

    // The session as deployed: the deployment's VOICE_AGENT and an AI binding (the fake). Nothing is prepared.
    const ai = new FakeWorkersAi();
    await runInDurableObject(callSessionStub(env, runId), (instance) => {
      const o = instance as unknown as { env: Env };
      o.env = { ...o.env, VOICE_AGENT: vars.VOICE_AGENT, AI: ai } as unknown as Env;
    });
    const callee = await connect("twilio", runId);

    const greetingFrames = await seatsConversation(callee);

    // The model was asked, with what the callee said; the engines were the Workers AI defaults.
    const models = new Set(ai.asked.map((a) => a.model));
    // The turn-detection model was asked at pauses too; this binding has none (it throws), so the silence bound ended the turns.
    expect(models).toEqual(new Set([WORKERS_AI_CHAT_MODEL, WORKERS_AI_TTS_MODEL, WORKERS_AI_STT_MODEL, WORKERS_AI_TURN_MODEL]));
    expect(ai.asked.filter((a) => a.model === WORKERS_AI_STT_MODEL).every((a) => (a.options as { websocket?: boolean })?.websocket)).toBe(true);
    const userWords = ai.chats.map((m) => m.filter((x) => x.role === "user").map((x) => x.content));
    expect(userWords.flat()).toEqual(expect.arrayContaining(["Sure, tell me more.", "We need twelve seats."]));
    expect(ai.transcribed).toEqual(expect.arrayContaining(["Sure, tell me more.", "We need twelve seats."]));
    expect(ai.spoken).toEqual(["Hi Ada!", "Great.", "How many seats do you need?", "Thank you, goodbye!"]);

    // The agent's voice reached the callee: the greeting, then the replies after the callee spoke, about as long as spoken.
    const voiced = callee.received.filter((f) => isVoiced(fromWire({ codec: "mulaw", rate: 8000 }, f))).length;
    const spokenFrames = ai.spoken.reduce((n, t) => n + toneMs(t) / 20, 0);
    expect(voiced).toBeGreaterThanOrEqual(spokenFrames - 10);
    const afterGreeting = callee.received.slice(greetingFrames).filter((f) => isVoiced(fromWire({ codec: "mulaw", rate: 8000 }, f))).length;
    expect(afterGreeting).toBeGreaterThanOrEqual((toneMs("Great.") + toneMs("How many seats do you need?") + toneMs("Thank you, goodbye!")) / 20 - 10);

    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("agent_hangup");
    expect(snap.turns.map((t) => [t.role, t.text])).toEqual([
      ["agent", "Hi Ada!"],
      ["callee", "Sure, tell me more."],
      ["agent", "Great. How many seats do you need?"],
      ["callee", "We need twelve seats."],
      ["agent", "Thank you, goodbye!"],
    ]);
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length, 100);
    expect(run.transcript.map((t: { text: string }) => t.text)).toEqual(snap.turns.map((t) => t.text));
    expect(run.gathered_context).toEqual({ seats: 12 });
    expect(run.disposition).toBe("interested");
  });
});
