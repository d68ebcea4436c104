// How the caller's turn ends sooner than the energy gate's silence (`end_of_turn_ms`, which stays the bound):
// - a speech model that detects turns itself (Deepgram Flux) says so: `end` ends the turn at once; `eager` (probably
//   finished) starts the reply's model request ahead, kept aside until the turn ends with the same words; `resumed`
//   (they went on) drops it (see speculative.ts);
// - otherwise, where the speech engine has a turn-detection model (Workers AI's smart-turn beside Nova-3), it is asked
//   at a short pause whether the turn is complete: yes ends the turn then; no (or a failure) leaves it to the silence
//   bound. Engines with neither keep the energy gate alone.
import { log } from "../lib/log";
import type { SampleRate } from "../lib/audio/resample";
import type { ChatModel, ChatRequest } from "./chat";
import type { SpeechStream, SpeechToText, TextToSpeech } from "./speech";
import { SpeculativeModel, withTurn } from "./speculative";
import { SpeculativeVoice } from "./speculative-voice";
import type { TurnDetector, Utterance } from "./turn-detector";

/** The quiet after the caller's voice at which the turn-detection model is asked (Pipecat asks at about this). */
export const TURN_MODEL_PAUSE_MS = 200;

export type TurnEndsHost = {
  /** The call's audio clock, or null once the agent is done (nothing ends a turn then). */
  now(): number | null;
  /** The caller's turn, ended by a model's word rather than the silence bound. */
  endOfTurn(u: Utterance): void;
  /** The request the reply would make now, or null when no reply may start ahead (one is under way, the agent speaks). */
  request(): ChatRequest | null;
};

export class TurnEnds {
  /** The model the agent's replies ask: a speculative request, when one matches, is used instead of a new one. */
  readonly model: SpeculativeModel;
  /** The voice the agent speaks with: a speculative reply's first sentence is synthesized ahead there. */
  readonly voice: SpeculativeVoice;
  /** The pause (the time of its last voiced frame) the turn-detection model was last asked about. */
  private askedAbout: number | null = null;

  private readonly stt: SpeechToText;

  constructor(
    engines: { model: ChatModel; stt: SpeechToText; tts: TextToSpeech },
    private readonly turns: TurnDetector,
    private readonly host: TurnEndsHost,
  ) {
    this.voice = new SpeculativeVoice(engines.tts);
    this.model = new SpeculativeModel(engines.model, this.voice);
    this.stt = engines.stt;
  }

  /** A model said the caller's turn is over: it ends now, without waiting for the silence bound. */
  private endNow(): void {
    const at = this.host.now();
    const u = at === null ? null : this.turns.endNow(at);
    if (u) this.host.endOfTurn(u);
  }

  /** Listens to a turn-detecting stream's events while it is the one hearing the caller (`current()`); returns it. */
  watch(stream: SpeechStream | null, current: () => SpeechStream | null): SpeechStream | null {
    if (!stream || !("onTurn" in stream)) return stream;
    stream.onTurn = (event, words) => {
      if (current() !== stream || this.host.now() === null) return;
      if (event === "end") return this.endNow();
      if (event === "resumed") return this.model.cancel();
      const request = words ? this.host.request() : null;
      if (request) this.model.start(withTurn(request, words!));
    };
    return stream;
  }

  /** After each of the caller's frames: at a short pause in their utterance, asks the turn-detection model once. */
  frame(atMs: number, rate: SampleRate): void {
    const turns = this.turns;
    if (!this.stt.endOfTurn || !turns.active) return;
    const pause = turns.lastVoiceMs;
    if (atMs - pause < TURN_MODEL_PAUSE_MS || this.askedAbout === pause) return;
    this.askedAbout = pause;
    this.stt.endOfTurn({ samples: turns.audio(), rate }).then(
      // Only a verdict on this very pause counts: the caller may have gone on while the model thought.
      (complete) => {
        if (complete && turns.active && turns.lastVoiceMs === pause) this.endNow();
      },
      (err) => log("warning", "voice_agent_turn_model_failed", { error: String((err as Error)?.message ?? err).slice(0, 300) }),
    );
  }

  /** The call ended: nothing started ahead goes on. */
  stop(): void {
    this.model.cancel();
  }
}
