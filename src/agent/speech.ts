// Speech engines as the voice agent uses them: speech-to-text on one utterance of the callee (the agent's own voice
// activity detection cuts the turns), text-to-speech one sentence at a time (speech starts with the first sentence
// of a reply). Providers (Workers AI's Deepgram models, Deepgram's and ElevenLabs' own APIs, the deterministic
// engines of tests and the demo) are one module each.
import type { SampleRate } from "../lib/audio/resample";

/** Synthesized audio; `words`: when each word ends (ms from this audio's start), where the voice gives timings. */
export type Speech = { samples: Int16Array; rate: SampleRate; words?: Array<{ word: string; endMs: number }> };

/** What a turn-detecting speech model says about the caller's turn. */
export type TurnEvent = "eager" | "end" | "resumed";

/** A transcription that runs while the callee speaks: audio goes in as it arrives, the text comes out at the turn's end. */
export interface SpeechStream {
  /** More of the utterance (16-bit PCM at the rate the stream was opened with). Never blocks: buffered until sent. */
  push(samples: Int16Array): void;
  /** The turn is over: the whole utterance's text (empty when nothing was said). Rejects on a provider failure. */
  finish(): Promise<string>;
  /** The turn is dropped (noise, a barge-in, the call ended): the connection closes and nothing more is answered. */
  abort(): void;
  /**
   * A model that detects the end of the turn itself (Deepgram Flux) says so here: `end` (the caller finished: the
   * turn ends without waiting for silence), `eager` (probably finished), `resumed` (they went on after an `eager`).
   * `words`: the turn's words so far (with `eager`, those its `end` will carry unless it is `resumed` first).
   */
  onTurn?: ((event: TurnEvent, words?: string) => void) | null;
  /**
   * A stream that reports words while the callee is still speaking (Flux's turn updates): the words so far, revised
   * as they come. Absent where an engine gives words only at the turn's end.
   */
  words?(): string;
}

export interface SpeechToText {
  transcribe(audio: Speech, signal?: AbortSignal): Promise<string>;
  /** Streaming providers: a transcription opened when the callee starts speaking (none: `transcribe` per turn). */
  open?(rate: SampleRate, signal?: AbortSignal): SpeechStream;
  /**
   * Engines with a turn-detection model (Workers AI's smart-turn): whether the caller's utterance so far, heard up to
   * a short pause, is a complete turn. Rejects when the model fails (the silence bound then decides).
   */
  endOfTurn?(audio: Speech, signal?: AbortSignal): Promise<boolean>;
  /** The offline engine: learn a line's sound and words mid-call (an agent test's persona caller, agent-tests/). */
  learn?(clip: Speech & { text: string }): void;
}

export interface TextToSpeech {
  synthesize(text: string, signal?: AbortSignal): Promise<Speech>;
  /** Streaming providers: the sentence's audio in pieces as it is generated, so playback starts with the first. */
  stream?(text: string, signal?: AbortSignal): AsyncIterable<Speech>;
}

/** A speech provider's refusal or failure, with what it said (never the key). */
export class SpeechError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

/** One piece of audio as a stream (an engine that synthesizes whole sentences, a recording). */
export async function* once(p: Promise<Speech>): AsyncIterable<Speech> {
  yield await p;
}
