// A reply started before the caller's turn is known to be over. A turn-detecting speech model (Deepgram Flux) says
// "probably finished" (`EagerEndOfTurn`) a few hundred ms before it is sure (`EndOfTurn`); the model is asked then,
// with the words so far, and what it streams is kept aside: not spoken, not in the history, no action taken. When the
// turn's reply asks the model for exactly that request (the same words, nothing else changed), it gets the stream
// already under way, so its first sentence is ready sooner; that sentence is also voiced ahead
// (speculative-voice.ts), so its audio is ready too. Any other request, or the caller going on
// (`TurnResumed`), aborts it: never heard, never kept.
import type { ChatEvent, ChatModel, ChatRequest } from "./chat";
import { ReadAhead } from "./read-ahead";
import { SentenceSplitter } from "./sentences";
import type { SpeculativeVoice } from "./speculative-voice";

/** The request the reply will make once the caller's `words` are heard (`Conversation.heard` appends them). */
export function withTurn(request: ChatRequest, words: string): ChatRequest {
  return { ...request, messages: [...request.messages, { role: "user", content: words }] };
}

/** The agent's model, with at most one speculative request under way beside it. */
export class SpeculativeModel implements ChatModel {
  private pending: { key: string; events: ReadAhead<ChatEvent> } | null = null;
  /** How speculation went on this call (for the logs and tests): started, used by the reply, or dropped. */
  readonly counts = { started: 0, used: 0, dropped: 0 };

  /** `voice`: where the speculative reply's first sentence is synthesized ahead (speculative-voice.ts). */
  constructor(
    private readonly model: ChatModel,
    private readonly voice: SpeculativeVoice | null = null,
  ) {}

  /** Asks the model ahead of the turn's end; what it streams waits, unheard, for `stream` with the same request. */
  start(request: ChatRequest): void {
    this.cancel();
    // The reply splits its text the same way, so the sentence voiced ahead is the one it will speak first.
    const splitter = new SentenceSplitter();
    let voiced = false;
    const seen = (ev: ChatEvent) => {
      if (voiced || !this.voice || ev.type !== "text") return;
      const [first] = splitter.push(ev.text);
      if (!first) return;
      voiced = true;
      this.voice.prefetch(first);
    };
    this.pending = { key: JSON.stringify(request), events: new ReadAhead((signal) => this.model.stream(request, signal), seen) };
    this.counts.started++;
  }

  /** Whether a speculative reply is under way (or waiting to be used). */
  get speculating(): boolean {
    return this.pending !== null;
  }

  /** The caller went on (or the call changed course): the speculative reply is aborted and forgotten. */
  cancel(): void {
    if (!this.pending) return;
    this.pending.events.cancel();
    this.voice?.drop();
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
    yield* p.events.take(signal);
  }
}
