// Workers AI faked at the binding boundary, as the binding answers: the chat model streamed in its wire shape (keyed
// by the conversation, as the seats script is), Aura's PCM for each sentence, Nova-3's live socket recognizing the
// callee's committed clips. Shared by the Workers AI conversation test and bench/scale (which counts its requests).
import { expect } from "vitest";
import { ClipSpeechToText } from "../../src/agent/clip-speech";
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import { WORKERS_AI_STT_MODEL, WORKERS_AI_TTS_MODEL } from "../../src/agent/workers-ai-speech";
import { isVoiced } from "../../src/lib/audio/level";
import { readWav } from "../../src/lib/audio/wav";
import { SCRIPT, SEATS, SURE } from "./conversation-support";
import { deepgramLiveSocket } from "./flux-support";

export const TTS_RATE = 16000;
/** The fake voice: a tone, 60 ms a character. */
export const toneMs = (text: string) => 60 * Math.max(1, text.length);

type Msg = { role: string; content: string | null; tool_calls?: { function: { name: string } }[] };

/** Workers AI as the binding answers: the chat model streamed (server-sent events), Aura's PCM, Nova-3's live socket. */
export class FakeWorkersAi {
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
