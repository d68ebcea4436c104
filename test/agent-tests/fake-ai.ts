// The deployment's AI binding faked at its boundary for agent tests (tests swap it into the Worker's env, which the
// run's object and the call sessions share in the test pool): the agent's Workers AI chat model answers as the scripted
// agent would, in the binding's streamed wire shape ({response, tool_calls}); Aura's text-to-speech answers real
// speech, eSpeak NG's from the local speech server (`speakUrl`), as raw linear16 PCM at the asked rate (what the
// engines ask for: container "none"); Nova-3's live socket recognizes the lines the caller's speaker said, by their
// sound as it arrived over the call. Every request is kept.
import { ClipSpeechToText } from "../../src/agent/clip-speech";
import type { ScriptStep } from "../../src/agent/scripted-model";
import { WORKERS_AI_STT_MODEL } from "../../src/agent/workers-ai-speech";
import { isVoiced } from "../../src/lib/audio/level";
import type { SampleRate } from "../../src/lib/audio/resample";
import { deepgramLiveSocket } from "../calls/flux-support";
import { scriptedAnswer, type WireChat } from "./scripted-wire";

export class AgentTestAi {
  readonly asked: Array<{ model: string; inputs: Record<string, any>; options?: Record<string, unknown> }> = [];
  /** What Nova-3 heard, turn by turn. */
  readonly heard: string[] = [];
  private readonly recognizer = new ClipSpeechToText([]);

  constructor(
    private readonly script: ScriptStep[],
    private readonly speech?: { speakUrl: string; callerSpeaker: string },
  ) {}

  async run(model: string, inputs: Record<string, any>, options?: Record<string, unknown>): Promise<unknown> {
    this.asked.push({ model, inputs: structuredClone(inputs), options });
    if (model.startsWith("@cf/deepgram/aura") && this.speech) return this.speak(inputs);
    if (model === WORKERS_AI_STT_MODEL && options?.websocket && this.speech) {
      const rate = Number(inputs.sample_rate) as SampleRate;
      return deepgramLiveSocket((samples) => this.recognize(samples, rate));
    }
    if (Array.isArray(inputs.messages) && model.startsWith("@cf/meta/")) {
      const { text, calls } = await scriptedAnswer(this.script, inputs as WireChat);
      const chunk = { response: text.join(""), tool_calls: calls.map((c) => ({ name: c.name, arguments: c.arguments })) };
      return new Response(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`).body!;
    }
    throw new Error(`no such model: ${model}`);
  }

  private async speak(inputs: Record<string, any>): Promise<Uint8Array> {
    const res = await fetch(`${this.speech!.speakUrl}/speak`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ text: inputs.text, rate: inputs.sample_rate }),
    });
    if (!res.ok) throw new Error(`the local speech server answered ${res.status}`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    // The caller's lines are what the agent's speech-to-text should know (the agent's own speech is not heard back).
    if (inputs.speaker === this.speech!.callerSpeaker)
      this.recognizer.learn({ text: inputs.text, samples: new Int16Array(bytes.slice().buffer), rate: inputs.sample_rate });
    return bytes;
  }

  /** The caller's line heard in a turn's audio (the silence around it trimmed). */
  private async recognize(samples: Int16Array, rate: SampleRate): Promise<string> {
    const frame = rate / 50;
    const voiced: number[] = [];
    for (let i = 0; i + frame <= samples.length; i += frame) if (isVoiced(samples.subarray(i, i + frame))) voiced.push(i);
    const speech = voiced.length ? samples.subarray(voiced[0], voiced.at(-1)! + frame) : samples.subarray(0, 0);
    const text = await this.recognizer.transcribe({ samples: speech, rate });
    this.heard.push(text);
    return text;
  }
}
