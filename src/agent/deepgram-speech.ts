// Deepgram's own API: Nova transcribes an utterance (pre-recorded REST) or a turn while it is spoken (live
// WebSocket); Aura speaks a sentence as raw 16-bit PCM, read as it is generated. Aura's voice is part of its model
// name.
import { pcm16ToBytes } from "../lib/audio/pcm";
import type { SampleRate } from "../lib/audio/resample";
import { DeepgramLive, deepgramSays } from "./deepgram-live";
import { base, ProviderCall, ProviderSpeechToText, ProviderTextToSpeech, type SpeechSettings } from "./provider-call";
import type { Speech, SpeechStream } from "./speech";

export type DeepgramSettings = SpeechSettings;

export const DEEPGRAM_STT_MODEL = "nova-3";
export const DEEPGRAM_TTS_MODEL = "aura-2-thalia-en";
const DEEPGRAM_URL = "https://api.deepgram.com";

/** The query of a transcription, pre-recorded or live: raw mono 16-bit PCM, punctuated and formatted. */
function listenUrl(s: DeepgramSettings, rate: number): string {
  const q = new URLSearchParams({
    model: s.model ?? DEEPGRAM_STT_MODEL,
    encoding: "linear16",
    sample_rate: String(rate),
    channels: "1",
    punctuate: "true",
    smart_format: "true",
  });
  if (s.language) q.set("language", s.language);
  return `${base(s.baseUrl ?? DEEPGRAM_URL)}/v1/listen?${q}`;
}

export class DeepgramSpeechToText extends ProviderSpeechToText {
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
    const url = listenUrl(this.settings, rate);
    const headers = { Upgrade: "websocket", Authorization: `Token ${this.settings.apiKey}` };
    return new DeepgramLive("Deepgram live speech-to-text", this.settings, (call, hs) => call.fetch(this.fetcher, url, { headers }, hs), signal);
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
