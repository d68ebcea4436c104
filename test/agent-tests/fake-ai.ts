// The deployment's AI binding faked at its boundary for agent tests (tests swap it into the Worker's env, which the
// run's object and the call sessions share in the test pool): the agent's Workers AI chat model answers as the scripted
// agent would, in the binding's streamed wire shape ({response, tool_calls}); Aura's text-to-speech answers `speech`
// (raw linear16 PCM at the asked rate, as asked for with container "none"). Every request is kept.
import type { ScriptStep } from "../../src/agent/scripted-model";
import { scriptedAnswer, type WireChat } from "./scripted-wire";

export class AgentTestAi {
  readonly asked: Array<{ model: string; inputs: Record<string, any> }> = [];

  constructor(
    private readonly script: ScriptStep[],
    private readonly speech?: (inputs: Record<string, any>) => Promise<Uint8Array>,
  ) {}

  async run(model: string, inputs: Record<string, any>): Promise<unknown> {
    this.asked.push({ model, inputs: structuredClone(inputs) });
    if (model.startsWith("@cf/deepgram/aura") && this.speech) return this.speech(inputs);
    if (Array.isArray(inputs.messages) && model.startsWith("@cf/meta/")) {
      const { text, calls } = await scriptedAnswer(this.script, inputs as WireChat);
      const chunk = { response: text.join(""), tool_calls: calls.map((c) => ({ name: c.name, arguments: c.arguments })) };
      return new Response(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`).body!;
    }
    throw new Error(`no such model: ${model}`);
  }
}
