// An OpenAI-compatible chat-completions endpoint (a hosted model, or a local server such as Ollama): the reply
// streamed as server-sent events, tools as functions, usage asked for in the stream.
import type { ChatEvent, ChatModel, ChatRequest } from "./chat";
import { ModelError, chatEvents, openAiMessages, openAiTools } from "./chat-stream";

export type OpenAiSettings = { baseUrl: string; apiKey: string; model: string; timeoutMs?: number };

export const OPENAI_TIMEOUT_MS = 10_000;

export class OpenAiModel implements ChatModel {
  constructor(
    private readonly settings: OpenAiSettings,
    private readonly fetcher: typeof fetch = fetch,
  ) {}

  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
    const { baseUrl, apiKey, model } = this.settings;
    const timeout = AbortSignal.timeout(this.settings.timeoutMs ?? OPENAI_TIMEOUT_MS);
    let res: Response;
    try {
      // Called unbound: the runtime's fetch refuses a `this` other than the global (it did, as a method of this model).
      res = await this.fetcher.call(undefined, `${baseUrl.replace(/\/+$/, "")}/chat/completions`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify({
          model,
          messages: openAiMessages(request.messages),
          ...(request.tools.length ? { tools: openAiTools(request.tools), tool_choice: "auto" } : {}),
          stream: true,
          stream_options: { include_usage: true },
        }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      throw new ModelError(
        `The model endpoint could not be reached: ${(err as Error)?.name === "TimeoutError" ? "timed out" : String((err as Error)?.message ?? err)}`,
        null,
      );
    }
    if (!res.ok || !res.body) {
      const text = await res.text().catch(() => "");
      let message = text.slice(0, 300);
      try {
        message = JSON.parse(text)?.error?.message ?? message;
      } catch {
        // not JSON
      }
      throw new ModelError(`The model endpoint answered HTTP ${res.status}${message ? `: ${message}` : ""}`, res.status);
    }
    yield* chatEvents(res.body);
  }
}
