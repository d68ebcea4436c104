// A stream read ahead in the background: its items are kept, in order, for whoever takes it later (once). A reply
// started before the caller's turn is known to be over (speculative.ts, speculative-voice.ts) is read this way, so
// the reply that follows picks it up where it is instead of asking afresh.

export class ReadAhead<T> {
  private readonly items: T[] = [];
  private done = false;
  private error: unknown = null;
  private wake: (() => void) | null = null;
  private readonly abort = new AbortController();

  /** Starts reading `source` now; `seen` is told of each item as it arrives (before anyone takes it). */
  constructor(source: (signal: AbortSignal) => AsyncIterable<T>, seen?: (item: T) => void) {
    void (async () => {
      try {
        for await (const item of source(this.abort.signal)) {
          if (this.abort.signal.aborted) break;
          this.items.push(item);
          seen?.(item);
          this.wake?.();
        }
      } catch (err) {
        this.error = err;
      }
      this.done = true;
      this.wake?.();
    })();
  }

  /** Stops reading: nothing more is asked of the source. */
  cancel(reason?: unknown): void {
    this.abort.abort(reason);
  }

  /** Every item from the first, as they come; `signal` (the taker's own cut-off) cancels the read. */
  async *take(signal?: AbortSignal): AsyncIterable<T> {
    const stop = () => this.cancel(signal?.reason);
    if (signal?.aborted) stop();
    signal?.addEventListener("abort", stop, { once: true });
    try {
      for (let i = 0; ; ) {
        if (i < this.items.length) {
          yield this.items[i++];
          continue;
        }
        if (this.done) {
          if (this.error) throw this.error;
          return;
        }
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = null;
      }
    } finally {
      signal?.removeEventListener("abort", stop);
    }
  }
}
