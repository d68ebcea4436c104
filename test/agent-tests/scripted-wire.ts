// An agent's own model in an agent test, played by the scripted model over a provider's wire: the OpenAI-shaped chat a
// provider receives (an OpenAI-compatible endpoint, Workers AI's chat models) read back as the agent's ChatRequest and
// answered as a scripted agent would (src/agent/scripted-model.ts). Shared by the stand-in endpoint
// (model-standin.global.ts, in Node) and the fake AI binding (fake-ai.ts, in the Worker).
import type { ChatMessage, ChatRequest, ToolCall } from "../../src/agent/chat";
import { ScriptedModel, type ScriptStep } from "../../src/agent/scripted-model";

export type WireMessage = {
  role: string;
  content: string | null;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
};
export type WireChat = { messages: WireMessage[]; tools?: Array<{ function: ChatRequest["tools"][number] }> };

/** The wire chat back as the agent's ChatRequest. */
export function chatRequest(sent: WireChat): ChatRequest {
  const messages = sent.messages.map((m): ChatMessage => {
    if (m.role === "tool") return { role: "tool", toolCallId: m.tool_call_id ?? "", content: m.content ?? "" };
    if (m.role === "assistant")
      return {
        role: "assistant",
        content: m.content ?? "",
        toolCalls: m.tool_calls?.map((c) => ({ id: c.id, name: c.function.name, arguments: JSON.parse(c.function.arguments || "{}") })),
      };
    return { role: m.role as "system" | "user", content: m.content ?? "" };
  });
  return { messages, tools: (sent.tools ?? []).map((t) => t.function) };
}

/** The scripted agent's answer to the chat: its words and its tool calls. */
export async function scriptedAnswer(script: ScriptStep[], sent: WireChat): Promise<{ text: string[]; calls: ToolCall[] }> {
  const out = { text: [] as string[], calls: [] as ToolCall[] };
  for await (const e of new ScriptedModel(script).stream(chatRequest(sent))) {
    if (e.type === "text") out.text.push(e.text);
    if (e.type === "tool_call") out.calls.push(e.call);
  }
  return out;
}
