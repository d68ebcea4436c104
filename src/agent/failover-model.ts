// The language model with fallbacks: the request goes to the first engine not cooling down; one that fails (a 429, a
// 5xx, unreachable) or says nothing within the first-byte bound hands the same request to the next, within the turn.
// Once an engine's first event came, it owns the reply: a failure after that is the turn's error, as without
// fallbacks (the caller may have heard part of the reply, which another engine would not continue).
import type { ChatEvent, ChatModel, ChatRequest } from "./chat";
import { type FailoverContext, firstAnswer, type Slot } from "./failover";

export class FailoverModel implements ChatModel {
  constructor(
    private readonly slots: readonly Slot<ChatModel>[],
    private readonly ctx: FailoverContext,
  ) {}

  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
    const { slot, value } = await firstAnswer("llm", this.slots, this.ctx, signal, async (model, attempt) => {
      const it = model.stream(request, attempt)[Symbol.asyncIterator]();
      return { it, first: await it.next() };
    });
    this.ctx.log.serve("llm", slot.id);
    const { it, first } = value;
    if (first.done) return;
    yield first.value;
    for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
  }
}
