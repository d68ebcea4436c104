// The language model as the voice agent sees it: a chat (system prompt, turns, tool calls and their results) and a
// streamed reply of text pieces and tool calls. Each provider (Workers AI, an OpenAI-compatible endpoint, the
// scripted model of tests and the demo) is one module implementing `ChatModel`.

export type ToolCall = { id: string; name: string; arguments: Record<string, unknown> };

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: ToolCall[] }
  | { role: "tool"; toolCallId: string; content: string };

/** A JSON Schema for a tool's arguments: flat objects of scalars are all an agent's transitions need. */
export type ToolParameters = {
  type: "object";
  properties: Record<string, { type: "string" | "number" | "boolean"; description?: string; enum?: string[] }>;
  required: string[];
};

export type ToolSpec = { name: string; description: string; parameters: ToolParameters };

export type ChatRequest = { messages: ChatMessage[]; tools: ToolSpec[] };

export type ChatEvent = { type: "text"; text: string } | { type: "tool_call"; call: ToolCall } | { type: "usage"; inputTokens: number; outputTokens: number };

export interface ChatModel {
  /** The reply as it is generated: text pieces in order, tool calls once complete, token usage where reported. */
  stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent>;
}
