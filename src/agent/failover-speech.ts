// Speech engines with fallbacks (docs/failover.md). Text-to-speech: a sentence goes to the first engine not cooling
// down; a failure or no audio within the first-byte bound hands the sentence to the next; once audio came, the engine
// owns the sentence. Speech-to-text: a whole utterance the same way. A live transcription (`open`) runs on the first
// engine not cooling down that streams; it cannot be moved mid-turn (the audio already went to it), so when it fails
// its failure is recorded (a live engine that keeps failing cools down and the next one streams) and the agent's
// fallback to a whole-turn transcription (transcribe.ts) goes through the chain above.
import type { SampleRate } from "../lib/audio/resample";
import { type FailoverContext, failoverReason, firstAnswer, type Slot } from "./failover";
import { once, type Speech, type SpeechStream, type SpeechToText, type TextToSpeech } from "./speech";

export class FailoverTextToSpeech implements TextToSpeech {
  constructor(
    private readonly slots: readonly Slot<TextToSpeech>[],
    private readonly ctx: FailoverContext,
  ) {}

  async synthesize(text: string, signal?: AbortSignal): Promise<Speech> {
    const { slot, value } = await firstAnswer("tts", this.slots, this.ctx, signal, (tts, attempt) => tts.synthesize(text, attempt));
    this.ctx.log.serve("tts", slot.id);
    return value;
  }

  async *stream(text: string, signal?: AbortSignal): AsyncIterable<Speech> {
    const { slot, value } = await firstAnswer("tts", this.slots, this.ctx, signal, async (tts, attempt) => {
      const it = (tts.stream ? tts.stream(text, attempt) : once(tts.synthesize(text, attempt)))[Symbol.asyncIterator]();
      return { it, first: await it.next() };
    });
    this.ctx.log.serve("tts", slot.id);
    const { it, first } = value;
    if (first.done) return;
    yield first.value;
    for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
  }
}

export class FailoverSpeechToText implements SpeechToText {
  readonly open?: (rate: SampleRate, signal?: AbortSignal) => SpeechStream;
  readonly endOfTurn?: SpeechToText["endOfTurn"];

  constructor(
    private readonly slots: readonly Slot<SpeechToText>[],
    private readonly ctx: FailoverContext,
  ) {
    if (slots.some((s) => s.engine.open)) this.open = (rate, signal) => this.live(rate, signal);
    // The turn-detection model is advisory (a failure leaves the turn to the silence bound): the primary's, if any.
    const primary = slots[0].engine;
    if (primary.endOfTurn) this.endOfTurn = (audio, signal) => primary.endOfTurn!(audio, signal);
  }

  async transcribe(audio: Speech, signal?: AbortSignal): Promise<string> {
    if (!audio.samples.length) return "";
    const { slot, value } = await firstAnswer("stt", this.slots, this.ctx, signal, (stt, attempt) => stt.transcribe(audio, attempt));
    this.ctx.log.serve("stt", slot.id);
    return value;
  }

  /** The first streaming engine not cooling down (cooling ones last), its answer recorded. */
  private live(rate: SampleRate, signal?: AbortSignal): SpeechStream {
    const slot = this.ctx.health.order(this.slots).find((s) => s.engine.open)!;
    const stream = slot.engine.open!(rate, signal);
    const finish = stream.finish.bind(stream);
    const { health, log, settings } = this.ctx;
    // Patched on the engine's own stream, so what the agent reads of it (`onTurn`, `words`) stays the engine's.
    stream.finish = async () => {
      try {
        const text = await finish();
        health.ok(slot.health);
        log.serve("stt", slot.id);
        return text;
      } catch (err) {
        const reason = failoverReason(err, signal);
        if (reason !== null) {
          health.failed(slot.health, settings);
          log.failedOver("stt", `${slot.id} (live)`, "whole turn", reason);
        }
        throw err;
      }
    };
    return stream;
  }
}
