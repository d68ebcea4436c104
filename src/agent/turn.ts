// One reply of the agent: the model's text, cut into sentences as it streams (each can be spoken at once), and the
// transitions it takes. After a transition the model is asked again at the new node, within the same reply, up to
// MAX_HOPS_PER_TURN times.
import type { ChatModel } from "./chat";
import { MAX_HOPS_PER_TURN, type Conversation } from "./graph";
import { SentenceSplitter } from "./sentences";

export type ReplyEvent = { type: "sentence"; text: string } | { type: "moved"; from: string; to: string } | { type: "end"; disposition: string | null };

export type ReplySummary = { text: string; ended: boolean; hops: number; inputTokens: number; outputTokens: number };

export async function* agentReply(conv: Conversation, model: ChatModel, signal?: AbortSignal): AsyncGenerator<ReplyEvent, ReplySummary> {
  const summary: ReplySummary = { text: "", ended: false, hops: 0, inputTokens: 0, outputTokens: 0 };
  // Every round after a tool call counts, refused ones too: a model that keeps calling tools cannot keep the turn.
  for (let round = 0; ; round++) {
    const splitter = new SentenceSplitter();
    const calls = [];
    let text = "";
    for await (const ev of model.stream(conv.request(), signal)) {
      // Cut off (a barge-in): what was generated so far goes into the history, which the agent then trims to what
      // was heard.
      if (signal?.aborted) {
        conv.said(text);
        return summary;
      }
      if (ev.type === "text") {
        text += ev.text;
        for (const sentence of splitter.push(ev.text)) yield { type: "sentence", text: sentence };
      } else if (ev.type === "tool_call") calls.push(ev.call);
      else {
        summary.inputTokens += ev.inputTokens;
        summary.outputTokens += ev.outputTokens;
      }
    }
    const rest = splitter.flush();
    if (rest) yield { type: "sentence", text: rest };
    conv.said(text);
    summary.text += (summary.text && text ? " " : "") + text.trim();
    let again = false;
    for (const call of calls) {
      const result = conv.take(call);
      if (result.kind === "moved") {
        summary.hops++;
        yield { type: "moved", from: result.from, to: result.to };
        again = true;
      } else if (result.kind === "ended") {
        summary.ended = true;
        yield { type: "end", disposition: result.disposition };
      } else again = true;
    }
    // An endCall node's reply is the last: the call ends once it is spoken, whether or not the model said so.
    if (conv.ending && !again && text.trim()) summary.ended = true;
    if (summary.ended || !again || round >= MAX_HOPS_PER_TURN) return summary;
  }
}
