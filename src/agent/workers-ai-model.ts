// Workers AI through the `AI` binding: an instruction-tuned chat model with tool calling, streamed. The binding is
// remote (a Cloudflare account); tests fake it at the binding boundary.
import type { ChatEvent, ChatModel, ChatRequest } from "./chat";
import { ModelError, chatEvents, openAiMessages, openAiTools } from "./chat-stream";
import { workersAiStatus } from "./failover";

export const WORKERS_AI_CHAT_MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";

/** The part of the binding the agent uses (the `Ai` type of @cloudflare/workers-types satisfies it). */
export type AiRunner = { run(model: string, inputs: Record<string, unknown>, options?: Record<string, unknown>): Promise<unknown> };

export class WorkersAiModel implements ChatModel {
  constructor(
    private readonly ai: AiRunner,
    private readonly model = WORKERS_AI_CHAT_MODEL,
  ) {}

  async *stream(request: ChatRequest): AsyncIterable<ChatEvent> {
    let out: unknown;
    try {
      out = await this.ai.run(this.model, {
        messages: openAiMessages(request.messages),
        ...(request.tools.length ? { tools: openAiTools(request.tools) } : {}),
        stream: true,
      });
    } catch (err) {
      // The binding throws its errors as text with Workers AI's code: the status it stands for decides a failover.
      throw new ModelError(`Workers AI failed: ${String((err as Error)?.message ?? err)}`, workersAiStatus(err));
    }
    if (out instanceof ReadableStream) {
      yield* chatEvents(out as ReadableStream<Uint8Array>);
      return;
    }
    // A model that does not stream answers once, in the same shapes.
    const whole = JSON.stringify(out ?? {});
    yield* chatEvents(new Response(`data: ${whole}\n\ndata: [DONE]\n\n`).body!);
  }
}
