// One request to a speech provider (Deepgram, ElevenLabs): its time limit under the caller's signal, its errors as
// SpeechErrors naming the provider (the key scrubbed), and a raw PCM body read as it arrives; and what those
// providers' engines share around their requests (an empty utterance, a sentence as its PCM stream joined).
import { pcm16FromBytes } from "../lib/audio/pcm";
import type { SampleRate } from "../lib/audio/resample";
import { type Speech, SpeechError, type SpeechToText, type TextToSpeech } from "./speech";

export const SPEECH_TIMEOUT_MS = 10_000;

/** A speech provider's settings (Deepgram, ElevenLabs): each module reads the fields it has. */
export type SpeechSettings = {
  apiKey: string;
  model?: string;
  /** Deepgram: an Aura model name, used when no model is given. ElevenLabs: the voice_id (speech needs one). */
  voice?: string;
  baseUrl?: string;
  language?: string;
  /** Text-to-speech output rate (default 16 kHz). */
  sampleRate?: SampleRate;
  timeoutMs?: number;
};

export const base = (url: string) => url.replace(/\/+$/, "");

/** All of a streamed answer as one Speech. */
async function joinSpeech(pieces: AsyncIterable<Speech>, rate: SampleRate): Promise<Speech> {
  const parts: Int16Array[] = [];
  for await (const piece of pieces) parts.push(piece.samples);
  const samples = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    samples.set(p, at);
    at += p.length;
  }
  return { samples, rate };
}

/** A provider's speech-to-text: an utterance with no audio is "" without asking (nor paying) the provider. */
export abstract class ProviderSpeechToText implements SpeechToText {
  constructor(
    protected readonly settings: SpeechSettings,
    protected readonly fetcher: typeof fetch = fetch,
  ) {}

  async transcribe(audio: Speech, signal?: AbortSignal): Promise<string> {
    return audio.samples.length ? this.request(audio, signal) : "";
  }

  /** The provider's transcript of an utterance that has audio. */
  protected abstract request(audio: Speech, signal?: AbortSignal): Promise<string>;
}

/** A provider's text-to-speech streamed as raw PCM at the settings' rate (16 kHz unless set); a whole sentence is its stream joined. */
export abstract class ProviderTextToSpeech implements TextToSpeech {
  constructor(
    protected readonly settings: SpeechSettings,
    protected readonly fetcher: typeof fetch = fetch,
  ) {}

  protected get rate(): SampleRate {
    return this.settings.sampleRate ?? 16000;
  }

  synthesize(text: string, signal?: AbortSignal): Promise<Speech> {
    return joinSpeech(this.stream(text, signal), this.rate);
  }

  abstract stream(text: string, signal?: AbortSignal): AsyncIterable<Speech>;
}

/**
 * One request to a speech provider, under the caller's signal and the provider's time limit. Every failure becomes a
 * SpeechError naming the provider and what it said (the key scrubbed, should it be echoed); the caller's own abort
 * is thrown as it is.
 */
export class ProviderCall {
  readonly timeoutMs: number;
  private readonly timeout: AbortSignal;
  readonly signal: AbortSignal;

  constructor(
    private readonly what: string,
    private readonly settings: { apiKey: string; timeoutMs?: number },
    private readonly says: (body: any) => unknown,
    private readonly caller?: AbortSignal,
  ) {
    this.timeoutMs = settings.timeoutMs ?? SPEECH_TIMEOUT_MS;
    this.timeout = AbortSignal.timeout(this.timeoutMs);
    this.signal = caller ? AbortSignal.any([caller, this.timeout]) : this.timeout;
  }

  error(detail: string, status: number | null = null): SpeechError {
    const key = this.settings.apiKey;
    return new SpeechError(`${this.what} ${key ? detail.replaceAll(key, "[key]") : detail}`, status);
  }

  /** What an exception means: the caller's abort as is, else a time-out or a failure to reach the provider. */
  failed(err: unknown): unknown {
    if (err instanceof SpeechError) return err;
    if (this.caller?.aborted) return this.caller.reason;
    if (this.timeout.aborted) return this.error(`timed out after ${this.timeoutMs} ms`);
    return this.error(`could not be reached: ${String((err as Error)?.message ?? err)}`);
  }

  async fetch(fetcher: typeof fetch, url: string, init: RequestInit, signal = this.signal): Promise<Response> {
    let res: Response;
    try {
      // Called unbound: the runtime's fetch refuses a `this` other than the global.
      res = await fetcher.call(undefined, url, { ...init, signal });
    } catch (err) {
      throw this.failed(err);
    }
    if (!res.ok && res.status !== 101) throw await this.refusal(res);
    return res;
  }

  /** The provider's refusal: its status and message (a JSON error body, else the start of the text). */
  async refusal(res: Response): Promise<SpeechError> {
    const text = await res.text().catch(() => "");
    let said: unknown = text.slice(0, 300);
    try {
      said = this.says(JSON.parse(text)) ?? said;
    } catch {
      // not JSON
    }
    const message = typeof said === "string" ? said : JSON.stringify(said);
    return this.error(`answered HTTP ${res.status}${message ? `: ${message}` : ""}`, res.status);
  }

  async json(res: Response): Promise<any> {
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw this.failed(err);
    }
    try {
      return JSON.parse(text);
    } catch {
      throw this.error("answered something other than JSON", res.status);
    }
  }

  /** A raw 16-bit PCM body as it arrives; a chunk ending mid-sample keeps its odd byte for the next one. */
  async *pcm(res: Response, rate: SampleRate): AsyncIterable<Speech> {
    if (!res.body) throw this.error("answered no audio");
    const reader = res.body.getReader();
    let carry: number | null = null;
    let finished = false;
    try {
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (err) {
          throw this.failed(err);
        }
        if (chunk.done) {
          finished = true;
          return;
        }
        let bytes = chunk.value;
        if (carry !== null) {
          const joined = new Uint8Array(bytes.length + 1);
          joined[0] = carry;
          joined.set(bytes, 1);
          bytes = joined;
          carry = null;
        }
        if (bytes.length % 2) {
          carry = bytes[bytes.length - 1];
          bytes = bytes.subarray(0, bytes.length - 1);
        }
        if (bytes.length) yield { samples: pcm16FromBytes(bytes), rate };
      }
    } finally {
      // A listener that stops early (a barge-in) ends the download too.
      if (!finished) await reader.cancel().catch(() => {});
    }
  }
}
