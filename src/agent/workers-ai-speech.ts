// Speech on Workers AI through the `AI` binding: Deepgram Nova-3 (or Flux, live only) transcribes an utterance,
// Deepgram Aura speaks a sentence as raw 16-bit PCM at the rate asked for. Models and voice are configuration.
import { pcm16FromBytes } from "../lib/audio/pcm";
import type { SampleRate } from "../lib/audio/resample";
import { readWav, wavFile } from "../lib/audio/wav";
import { DeepgramLive } from "./deepgram-live";
import { workersAiStatus } from "./failover";
import { smartTurn } from "./smart-turn";
import { type Speech, SpeechError, type SpeechStream, type SpeechToText, type TextToSpeech } from "./speech";
import type { AiRunner } from "./workers-ai-model";

export const WORKERS_AI_STT_MODEL = "@cf/deepgram/nova-3";
export const WORKERS_AI_TTS_MODEL = "@cf/deepgram/aura-1";
export { WORKERS_AI_TURN_MODEL } from "./smart-turn";
/** Flux's confidence for EagerEndOfTurn (its documented range 0.3-0.9; unset, it sends none): a speculative reply starts then. */
export const FLUX_EAGER_EOT_THRESHOLD = 0.4;

/**
 * An agent's Flux end-of-turn settings (`voice_agent.stt`): unset, Deepgram's defaults and our eager 0.4; eager null:
 * none. Workers AI's Flux and Deepgram's own take the same.
 */
export type FluxTurn = { eotThreshold?: number; eagerEotThreshold?: number | null; eotTimeoutMs?: number };

/** Flux's end-of-turn query fields, as strings as Deepgram takes them (eager mode unless turned off). */
export function fluxTurnQuery(flux: FluxTurn): Record<string, string> {
  const { eotThreshold, eagerEotThreshold = FLUX_EAGER_EOT_THRESHOLD, eotTimeoutMs } = flux;
  return {
    ...(eotThreshold !== undefined ? { eot_threshold: String(eotThreshold) } : {}),
    ...(eagerEotThreshold !== null ? { eager_eot_threshold: String(eagerEotThreshold) } : {}),
    ...(eotTimeoutMs !== undefined ? { eot_timeout_ms: String(eotTimeoutMs) } : {}),
  };
}

export class WorkersAiSpeechToText implements SpeechToText {
  /** Present for the models that stream (see `live`). */
  readonly open?: (rate: SampleRate, signal?: AbortSignal) => SpeechStream;

  constructor(
    private readonly ai: AiRunner,
    private readonly model = WORKERS_AI_STT_MODEL,
    private readonly flux: FluxTurn = {},
  ) {
    if (streamsLive(model)) this.open = (rate, signal) => this.live(rate, signal);
    // Flux detects the turn's end itself; the other models get Smart Turn beside them.
    if (!isFlux(model)) this.endOfTurn = smartTurn(ai);
  }

  /** Smart Turn's verdict on the utterance so far (smart-turn.ts). */
  endOfTurn?: (audio: Speech) => Promise<boolean>;

  async transcribe(audio: Speech): Promise<string> {
    const wav = wavFile(audio.samples, audio.rate);
    let out: any;
    try {
      // Flux only streams: a whole utterance (the fallback when a live turn failed) goes to Nova-3.
      const model = isFlux(this.model) ? WORKERS_AI_STT_MODEL : this.model;
      out = await this.ai.run(model, { audio: { body: wav, contentType: "audio/wav" }, punctuate: true, smart_format: true });
    } catch (err) {
      throw new SpeechError(`Workers AI speech-to-text failed: ${String((err as Error)?.message ?? err)}`, workersAiStatus(err));
    }
    const transcript = out?.results?.channels?.[0]?.alternatives?.[0]?.transcript;
    return typeof transcript === "string" ? transcript : "";
  }

  /** Flux's query: the audio's format and its end-of-turn settings. */
  private fluxQuery(rate: SampleRate): Record<string, string> {
    return { encoding: "linear16", sample_rate: String(rate), ...fluxTurnQuery(this.flux) };
  }

  /**
   * The turn transcribed while it is spoken: the binding opens a WebSocket to the model (`websocket: true`), which
   * speaks Deepgram's live protocol. Only the Deepgram models stream; another model transcribes each turn whole.
   */
  private live(rate: SampleRate, signal?: AbortSignal): SpeechStream {
    const flux = isFlux(this.model);
    return new DeepgramLive(
      "Workers AI live speech-to-text",
      { apiKey: "" },
      async (call) => {
        let out: unknown;
        try {
          // Flux formats its turns itself and takes no formatting options.
          const query = flux ? this.fluxQuery(rate) : { encoding: "linear16", sample_rate: String(rate), punctuate: "true", smart_format: "true" };
          out = await this.ai.run(this.model, query, { websocket: true });
        } catch (err) {
          throw call.failed(err);
        }
        if (!(out instanceof Response)) throw call.error("answered no WebSocket");
        return out;
      },
      signal,
      flux ? "flux" : "live",
    );
  }
}

/** Deepgram's conversational model: its own turn protocol, and no whole-utterance requests. */
export const isFlux = (model: string) => model.startsWith("@cf/deepgram/flux");

/** Whether a Workers AI speech-to-text model streams over the binding's WebSocket (Deepgram's do). */
export const streamsLive = (model: string) => model.startsWith("@cf/deepgram/");

/** The audio bytes of whatever shape the binding answers in: a stream, bytes, a Response, or base64 text. */
async function bytesOf(out: unknown): Promise<Uint8Array> {
  if (out instanceof Uint8Array) return out;
  if (out instanceof ArrayBuffer) return new Uint8Array(out);
  if (out instanceof ReadableStream || out instanceof Response) return new Uint8Array(await new Response(out as BodyInit).arrayBuffer());
  const b64 = typeof out === "string" ? out : typeof (out as { audio?: unknown })?.audio === "string" ? (out as { audio: string }).audio : null;
  if (b64 === null) throw new Error("Workers AI text-to-speech answered no audio");
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

export class WorkersAiTextToSpeech implements TextToSpeech {
  constructor(
    private readonly ai: AiRunner,
    private readonly model = WORKERS_AI_TTS_MODEL,
    private readonly speaker = "asteria",
    private readonly rate: SampleRate = 16000,
  ) {}

  async synthesize(text: string): Promise<Speech> {
    let out: unknown;
    try {
      out = await this.ai.run(this.model, { text, speaker: this.speaker, encoding: "linear16", container: "none", sample_rate: this.rate });
    } catch (err) {
      throw new SpeechError(`Workers AI text-to-speech failed: ${String((err as Error)?.message ?? err)}`, workersAiStatus(err));
    }
    const bytes = await bytesOf(out);
    // Asked for no container; a WAV answer is read as one all the same.
    if (bytes.length >= 12 && String.fromCharCode(...bytes.subarray(0, 4)) === "RIFF") {
      const w = readWav(bytes);
      return { samples: w.samples, rate: w.rate as SampleRate };
    }
    return { samples: pcm16FromBytes(bytes.subarray(0, bytes.length - (bytes.length % 2))), rate: this.rate };
  }
}
