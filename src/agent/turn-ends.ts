// How the caller's turn ends sooner than the energy gate's silence (`end_of_turn_ms`, which stays the bound):
// - a speech model that detects turns itself (Deepgram Flux) says so: `end` ends the turn at once; `eager` (probably
//   finished) starts the reply's model request ahead, kept aside until the turn ends with the same words; `resumed`
//   (they went on) drops it (see speculative.ts);
// - otherwise, where the speech engine has a turn-detection model (smart-turn beside Nova and Scribe), it is asked at
//   a short pause whether the turn is complete: yes ends the turn then; no (or a failure) leaves it to the silence
//   bound. Where the engine also gives the words so far (Deepgram Nova's interim results), the reply's model request
//   starts at a shorter pause on those words, kept aside like Flux's eager one: used when the turn ends with the same
//   words, dropped otherwise. Engines with neither keep the energy gate alone.
import { log } from "../lib/log";
import type { SampleRate } from "../lib/audio/resample";
import type { ChatModel, ChatRequest } from "./chat";
import type { SpeechStream, SpeechToText, TextToSpeech } from "./speech";
import { SpeculativeModel, withTurn } from "./speculative";
import { SpeculativeVoice } from "./speculative-voice";
import type { TurnDetector, Utterance } from "./turn-detector";

/** The quiet after the caller's voice at which the turn-detection model is asked (Pipecat asks at about this). */
export const TURN_MODEL_PAUSE_MS = 200;
/**
 * The quiet at which the reply's model request starts ahead on the words so far (where the engine gives them while
 * the caller speaks): sooner than the turn model is asked, since the model's first token, not the verdict, is what the
 * caller waits for. This pause is edgedial's own wait on every reply's path, ms for ms (the turn itself ends later, at
 * smart-turn's verdict, but before the first token): bench/voice measured 650 ms from the caller's last word to the
 * first audio with the engines' latencies when it started at 200 ms, 550 ms at 100, 510 ms at 60 (three frames). The
 * cost is a request dropped when the caller goes on with other words after such a pause; the same words are never
 * asked twice, so it is at most one request per change of the engine's words.
 */
export const REPLY_AHEAD_PAUSE_MS = 60;

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
  /** The pause a reply was last started ahead at. */
  private aheadAt: number | null = null;
  /** The words so far of the stream hearing the caller, where it gives them while they speak (none: ""). */
  private heard: () => string = () => "";
  /** The words a reply was last started on at a pause (not again for the same words). */
  private aheadOn = "";

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
    const words = stream?.words;
    if (stream && words) this.heard = () => (current() === stream ? words.call(stream) : "");
    this.aheadOn = "";
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

  /**
   * After each of the caller's frames: at a short pause in their utterance, the reply starts ahead on their words so
   * far; at a longer one the turn-detection model is asked, once per pause.
   */
  frame(atMs: number, rate: SampleRate): void {
    const turns = this.turns;
    if (!this.stt.endOfTurn || !turns.active) return;
    const pause = turns.lastVoiceMs;
    if (atMs - pause >= REPLY_AHEAD_PAUSE_MS && this.aheadAt !== pause) {
      this.aheadAt = pause;
      this.startAhead();
    }
    if (atMs - pause < TURN_MODEL_PAUSE_MS || this.askedAbout === pause) return;
    this.askedAbout = pause;
    // Words that came in since the short pause.
    this.startAhead();
    this.stt.endOfTurn({ samples: turns.audio(), rate }).then(
      // Only a verdict on this very pause counts: the caller may have gone on while the model thought.
      (complete) => {
        if (complete && turns.active && turns.lastVoiceMs === pause) this.endNow();
      },
      (err) => log("warning", "voice_agent_turn_model_failed", { error: String((err as Error)?.message ?? err).slice(0, 300) }),
    );
  }

  /**
   * At a short pause (and again when the turn model is asked, if the words moved on): the reply's request on the
   * words so far starts now, aside (speculative.ts), so a complete verdict does not wait for the model's first token
   * too. Only where the engine gives words while the caller speaks; a turn that ends with other words drops it.
   */
  private startAhead(): void {
    const words = this.heard().trim();
    if (!words || words === this.aheadOn) return;
    const request = this.host.request();
    if (!request) return;
    this.aheadOn = words;
    this.model.start(withTurn(request, words));
  }

  /** The call ended: nothing started ahead goes on. */
  stop(): void {
    this.model.cancel();
  }
}
