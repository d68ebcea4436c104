// ElevenLabs' own API: a sentence spoken by a chosen voice (voice_id) as raw 16-bit PCM, read as it is generated;
// an utterance transcribed by Scribe (sent as a WAV file; no live transcription here), the end of the turn judged by
// smart-turn at a pause where the deployment has the AI binding (Scribe has no turn events).
import { wavFile } from "../lib/audio/wav";
import { ProviderCall, ProviderSpeechToText, ProviderTextToSpeech, type SpeechSettings } from "./provider-call";
import type { TurnModel } from "./smart-turn";
import { type Speech, SpeechError } from "./speech";

/** `turnModel`: smart-turn, asked at a pause in the caller's utterance. */
export type ElevenLabsSettings = SpeechSettings & { turnModel?: TurnModel };

export const ELEVENLABS_TTS_MODEL = "eleven_flash_v2_5";
export const ELEVENLABS_STT_MODEL = "scribe_v1";
const ELEVENLABS_URL = "https://api.elevenlabs.io";

const base = (s: ElevenLabsSettings) => (s.baseUrl ?? ELEVENLABS_URL).replace(/\/+$/, "");

// {"detail": {"status", "message"}}, {"detail": "..."}, or a validation error's {"detail": [{"msg"}]}.
const elevenLabsSays = (body: any) => {
  const d = body?.detail;
  return d?.message ?? (Array.isArray(d) ? d[0]?.msg : d);
};

export class ElevenLabsTextToSpeech extends ProviderTextToSpeech {
  constructor(settings: ElevenLabsSettings, fetcher?: typeof fetch) {
    super(settings, fetcher);
    if (!settings.voice) throw new SpeechError("ElevenLabs text-to-speech needs a voice (a voice_id)", null);
  }

  async *stream(text: string, signal?: AbortSignal): AsyncIterable<Speech> {
    const s = this.settings;
    // pcm_8000, pcm_16000 and pcm_24000 are all among ElevenLabs' output formats: raw 16-bit little-endian mono.
    const call = new ProviderCall("ElevenLabs text-to-speech", s, elevenLabsSays, signal);
    const url = `${base(s)}/v1/text-to-speech/${encodeURIComponent(s.voice ?? "")}/stream?output_format=pcm_${this.rate}`;
    const res = await call.fetch(this.fetcher, url, {
      method: "POST",
      headers: { "xi-api-key": s.apiKey, "Content-Type": "application/json" },
      body: JSON.stringify({ text, model_id: s.model ?? ELEVENLABS_TTS_MODEL, ...(s.language ? { language_code: s.language } : {}) }),
    });
    yield* call.pcm(res, this.rate);
  }
}

export class ElevenLabsSpeechToText extends ProviderSpeechToText {
  readonly endOfTurn?: TurnModel;

  constructor(settings: ElevenLabsSettings, fetcher?: typeof fetch) {
    super(settings, fetcher);
    this.endOfTurn = settings.turnModel;
  }

  protected async request(audio: Speech, signal?: AbortSignal): Promise<string> {
    const s = this.settings;
    const form = new FormData();
    form.set("model_id", s.model ?? ELEVENLABS_STT_MODEL);
    if (s.language) form.set("language_code", s.language);
    // Laughter and the like would be written into the text as "(laughs)": the agent wants only the words.
    form.set("tag_audio_events", "false");
    form.set("file", new Blob([wavFile(audio.samples, audio.rate)], { type: "audio/wav" }), "utterance.wav");
    const call = new ProviderCall("ElevenLabs speech-to-text", s, elevenLabsSays, signal);
    const res = await call.fetch(this.fetcher, `${base(s)}/v1/speech-to-text`, { method: "POST", headers: { "xi-api-key": s.apiKey }, body: form });
    const out = await call.json(res);
    return typeof out?.text === "string" ? out.text.trim() : "";
  }
}
