// A reply started before the caller's turn is known to be over. A turn-detecting speech model (Deepgram Flux) says
// "probably finished" (`EagerEndOfTurn`) a few hundred ms before it is sure (`EndOfTurn`); the model is asked then,
// with the words so far, and what it streams is kept aside: not spoken, not in the history, no action taken. When the
// turn's reply asks the model for exactly that request (the same words, nothing else changed), it gets the stream
// already under way, so its first sentence is ready sooner. Any other request, or the caller going on
// (`TurnResumed`), aborts it: never heard, never kept.
import type { ChatEvent, ChatModel, ChatRequest } from "./chat";

type Pending = {
  key: string;
  events: ChatEvent[];
  done: boolean;
  error: unknown;
  wake: (() => void) | null;
  abort: AbortController;
};

/** The request the reply will make once the caller's `words` are heard (`Conversation.heard` appends them). */
export function withTurn(request: ChatRequest, words: string): ChatRequest {
  return { ...request, messages: [...request.messages, { role: "user", content: words }] };
}

/** The agent's model, with at most one speculative request under way beside it. */
export class SpeculativeModel implements ChatModel {
  private pending: Pending | null = null;
  /** How speculation went on this call (for the logs and tests): started, used by the reply, or dropped. */
  readonly counts = { started: 0, used: 0, dropped: 0 };

  constructor(private readonly model: ChatModel) {}

  /** Asks the model ahead of the turn's end; what it streams waits, unheard, for `stream` with the same request. */
  start(request: ChatRequest): void {
    this.cancel();
    const p: Pending = { key: JSON.stringify(request), events: [], done: false, error: null, wake: null, abort: new AbortController() };
    this.pending = p;
    this.counts.started++;
    void (async () => {
      try {
        for await (const ev of this.model.stream(request, p.abort.signal)) {
          if (p.abort.signal.aborted) break;
          p.events.push(ev);
          p.wake?.();
        }
      } catch (err) {
        p.error = err;
      }
      p.done = true;
      p.wake?.();
    })();
  }

  /** Whether a speculative reply is under way (or waiting to be used). */
  get speculating(): boolean {
    return this.pending !== null;
  }

  /** The caller went on (or the call changed course): the speculative reply is aborted and forgotten. */
  cancel(): void {
    if (!this.pending) return;
    this.pending.abort.abort();
    this.pending = null;
    this.counts.dropped++;
  }

  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
    const p = this.pending;
    if (!p || p.key !== JSON.stringify(request)) {
      this.cancel();
      yield* this.model.stream(request, signal);
      return;
    }
    this.pending = null;
    this.counts.used++;
    // From here it is the reply's own request: the reply's cut-off aborts it.
    const stop = () => p.abort.abort(signal?.reason);
    if (signal?.aborted) stop();
    signal?.addEventListener("abort", stop, { once: true });
    try {
      for (let i = 0; ; ) {
        if (i < p.events.length) {
          yield p.events[i++];
          continue;
        }
        if (p.done) {
          if (p.error) throw p.error;
          return;
        }
        await new Promise<void>((resolve) => {
          p.wake = resolve;
        });
        p.wake = null;
      }
    } finally {
      signal?.removeEventListener("abort", stop);
    }
  }
}
