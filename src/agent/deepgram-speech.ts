// Deepgram's own API: a turn transcribed while it is spoken on Flux (v2 listen: its own end-of-turn events, the
// agent's thresholds) or a Nova model (v1 live, word-level interim results; the turn's end judged by smart-turn
// beside it where the deployment has the AI binding); an utterance transcribed whole by Nova (pre-recorded REST: the
// fallback when a live turn failed); Aura speaks a sentence as raw 16-bit PCM, read as it is generated. Aura's voice
// is part of its model name.
import { pcm16ToBytes } from "../lib/audio/pcm";
import type { SampleRate } from "../lib/audio/resample";
import { DeepgramLive, deepgramSays } from "./deepgram-live";
import { base, ProviderCall, ProviderSpeechToText, ProviderTextToSpeech, type SpeechSettings } from "./provider-call";
import type { TurnModel } from "./smart-turn";
import type { Speech, SpeechStream } from "./speech";
import { type FluxTurn, fluxTurnQuery } from "./workers-ai-speech";

/** `flux`: the agent's Flux end-of-turn settings; `turnModel`: smart-turn, asked at a pause on a Nova model. */
export type DeepgramSettings = SpeechSettings & { flux?: FluxTurn; turnModel?: TurnModel };

/** Whole utterances (pre-recorded), and live turns when the agent names a Nova model. */
export const DEEPGRAM_STT_MODEL = "nova-3";
/** Live turns unless the agent names another model: Deepgram's conversational model, with its end-of-turn events. */
export const DEEPGRAM_FLUX_MODEL = "flux-general-en";
/** Flux's models (flux-general-en, flux-general-multi) take the v2 listen endpoint and speak its turn protocol. */
export const isDeepgramFlux = (model: string | undefined) => (model ?? DEEPGRAM_FLUX_MODEL).startsWith("flux");
export const DEEPGRAM_TTS_MODEL = "aura-2-thalia-en";
const DEEPGRAM_URL = "https://api.deepgram.com";

/**
 * Nova's query, pre-recorded or live: raw mono 16-bit PCM, punctuated and formatted. Live, interim results too: the
 * words as they are spoken, so a barge-in or a backchannel is decided on words before the turn ends.
 */
function listenUrl(s: DeepgramSettings, rate: number, live = false): string {
  const model = s.model && !isDeepgramFlux(s.model) ? s.model : DEEPGRAM_STT_MODEL;
  const q = new URLSearchParams({ model, encoding: "linear16", sample_rate: String(rate), channels: "1", punctuate: "true", smart_format: "true" });
  if (live) q.set("interim_results", "true");
  if (s.language) q.set("language", s.language);
  return `${base(s.baseUrl ?? DEEPGRAM_URL)}/v1/listen?${q}`;
}

/** Flux's query (Deepgram's v2 listen): the model, the audio's format and the agent's end-of-turn settings. */
function fluxUrl(s: DeepgramSettings, rate: number): string {
  const q = new URLSearchParams({ model: s.model ?? DEEPGRAM_FLUX_MODEL, encoding: "linear16", sample_rate: String(rate), ...fluxTurnQuery(s.flux ?? {}) });
  return `${base(s.baseUrl ?? DEEPGRAM_URL)}/v2/listen?${q}`;
}

export class DeepgramSpeechToText extends ProviderSpeechToText {
  /** Smart-turn at a pause, on a Nova model only: Flux says when the turn ends itself. */
  readonly endOfTurn?: TurnModel;

  constructor(
    protected readonly settings: DeepgramSettings,
    fetcher?: typeof fetch,
  ) {
    super(settings, fetcher);
    if (!isDeepgramFlux(settings.model)) this.endOfTurn = settings.turnModel;
  }

  protected async request(audio: Speech, signal?: AbortSignal): Promise<string> {
    const call = new ProviderCall("Deepgram speech-to-text", this.settings, deepgramSays, signal);
    const res = await call.fetch(this.fetcher, listenUrl(this.settings, audio.rate), {
      method: "POST",
      headers: { Authorization: `Token ${this.settings.apiKey}`, "Content-Type": "application/octet-stream" },
      body: pcm16ToBytes(audio.samples),
    });
    const out = await call.json(res);
    const transcript = out?.results?.channels?.[0]?.alternatives?.[0]?.transcript;
    return typeof transcript === "string" ? transcript : "";
  }

  open(rate: SampleRate, signal?: AbortSignal): SpeechStream {
    // Workers open an outbound WebSocket with an http(s) fetch and an Upgrade header.
    const flux = isDeepgramFlux(this.settings.model);
    const url = flux ? fluxUrl(this.settings, rate) : listenUrl(this.settings, rate, true);
    const headers = { Upgrade: "websocket", Authorization: `Token ${this.settings.apiKey}` };
    const what = flux ? "Deepgram Flux speech-to-text" : "Deepgram live speech-to-text";
    return new DeepgramLive(what, this.settings, (call, hs) => call.fetch(this.fetcher, url, { headers }, hs), signal, flux ? "flux" : "live", !flux);
  }
}

export class DeepgramTextToSpeech extends ProviderTextToSpeech {
  async *stream(text: string, signal?: AbortSignal): AsyncIterable<Speech> {
    const s = this.settings;
    const model = s.model ?? (s.voice?.startsWith("aura") ? s.voice : DEEPGRAM_TTS_MODEL);
    const q = new URLSearchParams({ model, encoding: "linear16", sample_rate: String(this.rate), container: "none" });
    const call = new ProviderCall("Deepgram text-to-speech", s, deepgramSays, signal);
    const res = await call.fetch(this.fetcher, `${base(s.baseUrl ?? DEEPGRAM_URL)}/v1/speak?${q}`, {
      method: "POST",
      headers: { Authorization: `Token ${s.apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ text }),
    });
    yield* call.pcm(res, this.rate);
  }
}
