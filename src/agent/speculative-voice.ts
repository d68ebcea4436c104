// The agent's voice, able to synthesize a reply's first sentence ahead: while a speculative reply (speculative.ts)
// streams, its first sentence is sent to the voice at once, and its audio is kept aside, unheard. When the reply
// that follows the caller's turn speaks exactly that sentence first, it takes the audio already made instead of
// waiting for the voice again; any other sentence, or the speculation dropped, leaves it unused (never played).
import { ReadAhead } from "./read-ahead";
import { once, type Speech, type TextToSpeech } from "./speech";

export class SpeculativeVoice implements TextToSpeech {
  private ahead: { text: string; audio: ReadAhead<Speech> } | null = null;
  /** How prefetching went on this call (for the logs and tests). */
  readonly counts = { prefetched: 0, used: 0 };
  readonly stream?: (text: string, signal?: AbortSignal) => AsyncIterable<Speech>;

  constructor(private readonly voice: TextToSpeech) {
    // A streaming voice stays streaming: its pieces are read ahead and taken in order.
    if (voice.stream) this.stream = (text, signal) => this.take(text, signal) ?? voice.stream!(text, signal);
  }

  /** Starts synthesizing `text` ahead, replacing (and aborting) anything synthesized ahead before. */
  prefetch(text: string): void {
    this.drop();
    const voice = this.voice;
    const source = voice.stream ? (s: AbortSignal) => voice.stream!(text, s) : (s: AbortSignal) => once(voice.synthesize(text, s));
    this.ahead = { text, audio: new ReadAhead(source) };
    this.counts.prefetched++;
  }

  /** The speculation was dropped: what was synthesized ahead is aborted and forgotten. */
  drop(): void {
    this.ahead?.audio.cancel();
    this.ahead = null;
  }

  /** The audio made ahead for `text`, once; null when none was. */
  private take(text: string, signal?: AbortSignal): AsyncIterable<Speech> | null {
    if (this.ahead?.text !== text) return null;
    const audio = this.ahead.audio;
    this.ahead = null;
    this.counts.used++;
    return audio.take(signal);
  }

  async synthesize(text: string, signal?: AbortSignal): Promise<Speech> {
    // Only a whole-sentence voice prefetches whole sentences; a streaming one is taken through `stream`.
    const ahead = this.voice.stream ? null : this.take(text, signal);
    if (!ahead) return this.voice.synthesize(text, signal);
    for await (const speech of ahead) return speech;
    throw new Error("the voice returned no audio");
  }
}
