// One reply of the agent: the model's text, cut into sentences as it streams (each can be spoken at once), the
// transitions it takes and the actions it calls for. After a transition or an action's result the model is asked
// again, within the same reply, for at most MAX_HOPS_PER_TURN rounds; a last round offers no tools, so a model that
// keeps calling them still answers the callee. At a transferCall node the agent transfers at once (no model round):
// it says the node's message, hands the call over, and when that does not connect tells the caller and goes on along
// the node's no-answer edge.
import type { Action, TransferNode } from "./actions";
import type { ChatModel, ToolCall } from "./chat";
import { MAX_HOPS_PER_TURN, type Conversation } from "./graph";
import { SentenceSplitter } from "./sentences";
import type { TransferOutcome } from "./voice-agent";

export type ReplyEvent =
  | { type: "sentence"; text: string }
  | { type: "moved"; from: string; to: string }
  | { type: "end"; disposition: string | null }
  /** An action begins (the agent may play a filler while it runs). */
  | { type: "action"; name: string };

export type ReplySummary = {
  text: string;
  ended: boolean;
  /** The call was handed to a person: the agent says nothing more. */
  transferred: boolean;
  hops: number;
  inputTokens: number;
  outputTokens: number;
};

/** What carrying out an action gave: the text the model reads, and for a transfer how it went. */
export type ActionResult = { content: string; transfer?: TransferOutcome };

/**
 * Carries out an action. For a transfer the node's message has been yielded as a sentence already: the runner lets
 * it be heard before handing over. Never throws for the action's own failure (that is a result the model reads).
 */
export type ActionRunner = (action: Action, call: ToolCall) => Promise<ActionResult>;

/** What the caller hears when a transfer did not connect, before the conversation goes on. */
export const TRANSFER_LINES: Record<Exclude<TransferOutcome, "connected">, string> = {
  no_answer: "I'm sorry, nobody was able to pick up right now.",
  failed: "I'm sorry, I couldn't put you through right now.",
  unsupported: "I'm sorry, I'm not able to transfer calls on this line.",
};

export const INTERRUPTED_RESULT = "Interrupted: the caller spoke before this finished (the request may still have gone through).";

const noActions: ActionRunner = async () => ({ content: "Not available on this call." });

export async function* agentReply(
  conv: Conversation,
  model: ChatModel,
  signal?: AbortSignal,
  act: ActionRunner = noActions,
): AsyncGenerator<ReplyEvent, ReplySummary> {
  const summary: ReplySummary = { text: "", ended: false, transferred: false, hops: 0, inputTokens: 0, outputTokens: 0 };
  const aborted = new Promise<null>((resolve) => signal?.addEventListener("abort", () => resolve(null), { once: true }));
  /** The action's result, or null when the reply was cut off first (its result then says so). */
  const run = async (action: Action, call: ToolCall): Promise<ActionResult | null> => {
    const result = await Promise.race([act(action, call), aborted]);
    conv.toolResult(call.id, result ? result.content : INTERRUPTED_RESULT);
    return result;
  };
  // Every round after a tool call counts, refused ones too: a model that keeps calling tools cannot keep the turn.
  for (let round = 0; ; round++) {
    const transfer = conv.transferCall();
    if (transfer) {
      const done = yield* transferring(conv, transfer, run, summary);
      if (done || signal?.aborted) return summary;
      continue;
    }
    const last = round >= MAX_HOPS_PER_TURN;
    const request = conv.request();
    const splitter = new SentenceSplitter();
    const calls: ToolCall[] = [];
    let text = "";
    for await (const ev of model.stream(last ? { ...request, tools: [] } : request, signal)) {
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
    for (const call of last ? [] : calls) {
      const result = conv.take(call);
      if (result.kind === "moved") {
        summary.hops++;
        yield { type: "moved", from: result.from, to: result.to };
        again = true;
      } else if (result.kind === "ended") {
        summary.ended = true;
        yield { type: "end", disposition: result.disposition };
      } else if (result.kind === "action") {
        yield { type: "action", name: call.name };
        await run(result.action, call);
        if (signal?.aborted) return summary;
        again = true;
      } else again = true;
    }
    // An endCall node's reply is the last: the call ends once it is spoken, whether or not the model said so.
    if (conv.ending && !again && text.trim()) summary.ended = true;
    if (summary.ended || !again || last) return summary;
  }
}

/** The transfer at a transferCall node; true when the reply is over (connected, or nowhere to go on to). */
async function* transferring(
  conv: Conversation,
  t: { call: ToolCall; transfer: TransferNode },
  run: (action: Action, call: ToolCall) => Promise<ActionResult | null>,
  summary: ReplySummary,
): AsyncGenerator<ReplyEvent, boolean> {
  if (t.transfer.message.trim()) {
    yield { type: "sentence", text: t.transfer.message.trim() };
    conv.said(t.transfer.message.trim());
  }
  conv.calling(t.call);
  yield { type: "action", name: t.call.name };
  const result = await run({ type: "transfer", transfer: t.transfer }, t.call);
  if (!result) return true;
  const outcome = result.transfer ?? "failed";
  if (outcome === "connected") {
    summary.transferred = true;
    return true;
  }
  const line = TRANSFER_LINES[outcome];
  yield { type: "sentence", text: line };
  conv.said(line);
  const from = conv.nodeId;
  if (!conv.noAnswer()) {
    // Only an invalid definition has no way on: the call ends politely rather than trying again and again.
    summary.ended = true;
    return true;
  }
  summary.hops++;
  yield { type: "moved", from, to: conv.nodeId };
  return false;
}
