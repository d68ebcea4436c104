// Streamed chat replies as the providers send them: server-sent events whose data is a JSON chunk, either OpenAI's
// chat-completions shape (`choices[0].delta` with content and tool calls in pieces) or Workers AI's own (`response`
// text, `tool_calls` whole), ending with `[DONE]`. Both become ChatEvents; tool calls are handed on once complete.
import type { ChatEvent, ChatMessage, ChatRequest, ToolCall } from "./chat";

/** The data of each server-sent event, as the bytes arrive (events may be split across chunks anywhere). */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncIterable<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let nl = buffer.search(/\r?\n/);
      while (nl >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(buffer[nl] === "\r" ? nl + 2 : nl + 1);
        if (line === "") {
          if (data.length) yield data.join("\n");
          data = [];
        } else if (line.startsWith("data:")) data.push(line.slice(line[5] === " " ? 6 : 5));
        nl = buffer.search(/\r?\n/);
      }
      if (done) break;
    }
    if (buffer.startsWith("data:")) data.push(buffer.slice(buffer[5] === " " ? 6 : 5));
    if (data.length) yield data.join("\n");
  } finally {
    reader.releaseLock();
  }
}

function parseArguments(v: unknown): Record<string, unknown> {
  if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  if (typeof v !== "string" || !v.trim()) return {};
  try {
    const parsed = JSON.parse(v);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

/** The chat events of a streamed reply in either provider shape. */
export async function* chatEvents(body: ReadableStream<Uint8Array>): AsyncIterable<ChatEvent> {
  // OpenAI sends a tool call in pieces keyed by index: its id and name first, its arguments as string fragments.
  const pending = new Map<number, { id: string; name: string; args: string }>();
  let seq = 0;
  for await (const data of sseData(body)) {
    if (data.trim() === "[DONE]") break;
    let chunk: any;
    try {
      chunk = JSON.parse(data);
    } catch {
      continue;
    }
    const delta = chunk?.choices?.[0]?.delta;
    const text = typeof delta?.content === "string" ? delta.content : typeof chunk?.response === "string" ? chunk.response : "";
    if (text) yield { type: "text", text };
    for (const tc of Array.isArray(delta?.tool_calls) ? delta.tool_calls : []) {
      const index = Number.isInteger(tc?.index) ? tc.index : pending.size;
      const p = pending.get(index) ?? { id: "", name: "", args: "" };
      if (tc?.id) p.id = String(tc.id);
      if (tc?.function?.name) p.name += String(tc.function.name);
      if (typeof tc?.function?.arguments === "string") p.args += tc.function.arguments;
      pending.set(index, p);
    }
    // Workers AI: whole tool calls, in its legacy shape ({name, arguments}) or OpenAI's ({id, function}).
    for (const tc of Array.isArray(chunk?.tool_calls) ? chunk.tool_calls : []) {
      const name = tc?.function?.name ?? tc?.name;
      if (typeof name !== "string" || !name) continue;
      yield { type: "tool_call", call: { id: String(tc?.id ?? `call_${++seq}`), name, arguments: parseArguments(tc?.function?.arguments ?? tc?.arguments) } };
    }
    const usage = chunk?.usage;
    if (usage && Number.isFinite(usage.prompt_tokens)) {
      yield { type: "usage", inputTokens: Number(usage.prompt_tokens), outputTokens: Number(usage.completion_tokens ?? 0) };
    }
  }
  for (const [, p] of [...pending].sort((a, b) => a[0] - b[0])) {
    if (p.name) yield { type: "tool_call", call: { id: p.id || `call_${++seq}`, name: p.name, arguments: parseArguments(p.args) } };
  }
}

/** The chat in OpenAI's wire format (which Workers AI's chat models take too). */
export function openAiMessages(messages: ChatMessage[]): Record<string, unknown>[] {
  return messages.map((m) => {
    if (m.role === "tool") return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
    if (m.role === "assistant" && m.toolCalls?.length) {
      return {
        role: "assistant",
        content: m.content || null,
        tool_calls: m.toolCalls.map((c: ToolCall) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
      };
    }
    return { role: m.role, content: m.content };
  });
}

export function openAiTools(tools: ChatRequest["tools"]): Record<string, unknown>[] {
  return tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }));
}

/** A provider's refusal or failure, with what it said (never the key). */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}
