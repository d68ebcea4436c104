// A deterministic language model for tests, the demo and local development without a cloud account: its replies are
// keyed by the conversation so far (the callee's last words, and the node's prompt), streamed word by word like a
// real model's tokens.
import type { ChatEvent, ChatModel, ChatRequest } from "./chat";
import { ModelError } from "./chat-stream";

export type ScriptStep = {
  /** Matches the callee's last words: a case-insensitive substring, or a pattern. Absent: any. */
  user?: string | RegExp;
  /** Matches when the system prompt (the node's prompt) contains this. Absent: any node. */
  prompt?: string;
  /**
   * Matches only right after the caller spoke ("caller"), or when the agent acted last ("agent": a move to this node,
   * an HTTP tool's answer, a transfer that did not connect), so a script can tell arriving at a node from an answer
   * there. Absent: either.
   */
  after?: "caller" | "agent";
  say?: string;
  /** A tool call to make after the text (not right after the same tool's result, so a step cannot loop on itself). */
  call?: { name: string; arguments?: Record<string, unknown> };
  /** The model fails here, as a provider does (an outage, a timeout), after any text. */
  fail?: string;
  /** The model never answers (a hung endpoint) until the request is cancelled. */
  stall?: boolean;
};

export const SCRIPT_FALLBACK = "Sorry, could you say that again?";

const matches = (pattern: string | RegExp | undefined, value: string) =>
  pattern === undefined || (typeof pattern === "string" ? value.toLowerCase().includes(pattern.toLowerCase()) : pattern.test(value));

export class ScriptedModel implements ChatModel {
  /** Every request it was asked, for tests to look at. */
  readonly requests: ChatRequest[] = [];
  private calls = 0;

  constructor(private readonly script: ScriptStep[]) {}

  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
    this.requests.push(structuredClone(request));
    const messages = request.messages;
    const system = messages[0]?.role === "system" ? messages[0].content : "";
    const lastUser = [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
    const last = messages[messages.length - 1];
    const previous = messages[messages.length - 2];
    const justCalled = last?.role === "tool" && previous?.role === "assistant" ? (previous.toolCalls?.[0]?.name ?? null) : null;
    const tools = new Set(request.tools.map((t) => t.name));
    const after = last?.role === "user" ? "caller" : last?.role === "tool" || last?.role === "assistant" ? "agent" : null;
    const step = this.script.find(
      (s) =>
        matches(s.user, lastUser) &&
        (s.after === undefined || s.after === after) &&
        (s.prompt === undefined || system.includes(s.prompt)) &&
        (!s.call || (tools.has(s.call.name) && s.call.name !== justCalled)),
    );
    if (step?.stall) {
      await new Promise((resolve) => signal?.addEventListener("abort", resolve, { once: true }));
      return;
    }
    const say = step ? (step.say ?? "") : SCRIPT_FALLBACK;
    const words = say.match(/\S+\s*/g) ?? [];
    for (const w of words) yield { type: "text", text: w };
    if (step?.fail) throw new ModelError(step.fail, null);
    if (step?.call) yield { type: "tool_call", call: { id: `call_${++this.calls}`, name: step.call.name, arguments: step.call.arguments ?? {} } };
    yield { type: "usage", inputTokens: messages.reduce((n, m) => n + Math.ceil(m.content.length / 4), 0), outputTokens: words.length };
  }
}
