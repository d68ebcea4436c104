// The model of local development without a cloud account (`npm run dev` without --workers-ai): deterministic and
// offline, it follows the agent's graph instead of understanding anything. It repeats what it heard, takes the
// node's first transition that needs no arguments, and at an endCall node says goodbye and ends the call, so a
// sandbox call or a browser call walks the whole graph to its end. Never used on a deployment.
import type { ChatEvent, ChatModel, ChatRequest } from "./chat";

export const LOCAL_MODEL_GOODBYE = "Thank you for your time. Goodbye!";

export class LocalModel implements ChatModel {
  private calls = 0;

  constructor(private readonly reserved: ReadonlySet<string>) {}

  async *stream(request: ChatRequest): AsyncIterable<ChatEvent> {
    const messages = request.messages;
    const last = messages[messages.length - 1];
    const heard =
      [...messages]
        .reverse()
        .find((m) => m.role === "user")
        ?.content.trim() ?? "";
    const ending = request.tools.find((t) => t.name === "end_call");
    // The graph's transitions (not the agent's actions such as a transfer), the first that needs no arguments.
    const next = request.tools.find((t) => !this.reserved.has(t.name) && t.parameters.required.length === 0);
    let say: string;
    let call: string | null = null;
    if (ending) {
      say = LOCAL_MODEL_GOODBYE;
      call = ending.name;
    } else if (last?.role === "tool") {
      // Just moved: nothing more to say at this node until the caller speaks again.
      say = "";
    } else {
      say = heard ? `You said: ${heard.replace(/[.!?]+$/, "")}. Got it.` : "Hello! How can I help you today?";
      call = next?.name ?? null;
    }
    const words = say.match(/\S+\s*/g) ?? [];
    for (const w of words) yield { type: "text", text: w };
    if (call) yield { type: "tool_call", call: { id: `local_${++this.calls}`, name: call, arguments: {} } };
    yield { type: "usage", inputTokens: messages.reduce((n, m) => n + Math.ceil(m.content.length / 4), 0), outputTokens: words.length };
  }
}
