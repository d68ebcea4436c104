// Deepgram's own API: Nova transcribes an utterance (pre-recorded REST) or a turn while it is spoken (live
// WebSocket); Aura speaks a sentence as raw 16-bit PCM, read as it is generated. Aura's voice is part of its model
// name. The request helpers at the end are shared with the ElevenLabs module.
import { pcm16FromBytes, pcm16ToBytes } from "../../lib/audio/pcm";
import type { SampleRate } from "../../lib/audio/resample";
import { type Speech, SpeechError, type SpeechStream, type SpeechToText, type TextToSpeech } from "./speech";

export type DeepgramSettings = {
  apiKey: string;
  model?: string;
  /** An Aura model name ("aura-2-thalia-en") when no model is given; anything else is ignored. */
  voice?: string;
  baseUrl?: string;
  language?: string;
  /** Text-to-speech output rate (default 16 kHz). */
  sampleRate?: SampleRate;
  timeoutMs?: number;
};

export const DEEPGRAM_STT_MODEL = "nova-3";
export const DEEPGRAM_TTS_MODEL = "aura-2-thalia-en";
export const SPEECH_TIMEOUT_MS = 10_000;
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

const deepgramSays = (body: any) => body?.err_msg ?? body?.message;

export class DeepgramSpeechToText implements SpeechToText {
  constructor(
    private readonly settings: DeepgramSettings,
    private readonly fetcher: typeof fetch = fetch,
  ) {}

  async transcribe(audio: Speech, signal?: AbortSignal): Promise<string> {
    if (!audio.samples.length) return "";
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
    return new DeepgramLive(this.settings, this.fetcher, listenUrl(this.settings, rate), signal);
  }
}

/**
 * One turn on Deepgram's live API. Audio pushed before the socket opens waits in order; at the end `Finalize` flushes
 * what Deepgram still holds and `CloseStream` makes it send the last results and close, so the close is the answer.
 */
class DeepgramLive implements SpeechStream {
  private ws: WebSocket | null = null;
  private waiting: Uint8Array[] = [];
  private finals: string[] = [];
  private ending = false;
  private done = false;
  private failure: unknown = null;
  private settle: { resolve(text: string): void; reject(err: unknown): void } | null = null;
  private readonly call: ProviderCall;
  private readonly onAbort = () => this.abort();

  constructor(
    private readonly settings: DeepgramSettings,
    fetcher: typeof fetch,
    url: string,
    private readonly signal?: AbortSignal,
  ) {
    this.call = new ProviderCall("Deepgram live speech-to-text", settings, deepgramSays, signal);
    signal?.addEventListener("abort", this.onAbort, { once: true });
    this.connect(fetcher, url).catch((err) => this.fail(err));
  }

  private async connect(fetcher: typeof fetch, url: string): Promise<void> {
    // Workers open an outbound WebSocket with an http(s) fetch and an Upgrade header. The fetch's signal would cut
    // the open socket too (a close 1006), so it is only the handshake's: it follows the call's until the answer.
    const handshake = new AbortController();
    const stop = () => handshake.abort(this.call.signal.reason);
    this.call.signal.addEventListener("abort", stop, { once: true });
    let res: Response;
    try {
      res = await this.call.fetch(fetcher, url, { headers: { Upgrade: "websocket", Authorization: `Token ${this.settings.apiKey}` } }, handshake.signal);
    } finally {
      this.call.signal.removeEventListener("abort", stop);
    }
    const ws = res.webSocket;
    if (!ws) throw await this.call.refusal(res);
    ws.accept();
    if (this.done) return ws.close(1000, "aborted");
    this.ws = ws;
    ws.addEventListener("message", (e) => this.onMessage(e.data));
    ws.addEventListener("close", (e) => this.onClose(e.code, e.reason));
    ws.addEventListener("error", () => this.fail(this.call.error("the stream failed")));
    for (const bytes of this.waiting) this.send(bytes);
    this.waiting = [];
    if (this.ending) this.sendEnd();
  }

  push(samples: Int16Array): void {
    if (this.done || this.ending) return;
    const bytes = pcm16ToBytes(samples);
    if (this.ws) this.send(bytes);
    else this.waiting.push(bytes);
  }

  finish(): Promise<string> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.ending) return Promise.reject(new Error("finish() was already called"));
    this.ending = true;
    const answer = new Promise<string>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // The connection's own limit covered the handshake; this one covers Deepgram's last answer.
    const timer = setTimeout(() => this.fail(this.call.error(`timed out after ${this.call.timeoutMs} ms`)), this.call.timeoutMs);
    answer.then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
    if (this.ws) this.sendEnd();
    return answer;
  }

  abort(): void {
    if (this.done) return;
    this.fail(this.signal?.aborted ? this.signal.reason : new DOMException("The transcription was aborted", "AbortError"));
  }

  private sendEnd(): void {
    this.send(JSON.stringify({ type: "Finalize" }));
    this.send(JSON.stringify({ type: "CloseStream" }));
  }

  /** Sends on the open socket; a socket that went away fails the turn (push never throws). */
  private send(data: Uint8Array | string): void {
    try {
      this.ws?.send(data);
    } catch (err) {
      this.fail(this.call.error(`the stream failed: ${(err as Error)?.message ?? err}`));
    }
  }

  private onMessage(data: unknown): void {
    if (typeof data !== "string") return;
    let msg: any;
    try {
      msg = JSON.parse(data);
    } catch {
      return;
    }
    // Interim results are revised later; only final ones make the turn's text.
    const text = msg?.type === "Results" && msg.is_final ? msg.channel?.alternatives?.[0]?.transcript : undefined;
    if (typeof text === "string" && text.trim()) this.finals.push(text.trim());
  }

  private onClose(code: number, reason: string): void {
    if (this.done) return;
    this.ws = null;
    // A close after CloseStream is the answer; any other (Deepgram's DATA-/NET- errors, a close before the turn
    // ended) is a failure.
    if (this.ending && (code === 1000 || code === 1005)) {
      this.done = true;
      this.signal?.removeEventListener("abort", this.onAbort);
      this.settle?.resolve(this.finals.join(" "));
      return;
    }
    this.fail(this.call.error(`closed the stream (${code}${reason ? ` ${reason}` : ""})`));
  }

  private fail(err: unknown): void {
    if (this.done) return;
    this.done = true;
    this.failure = err;
    this.waiting = [];
    this.signal?.removeEventListener("abort", this.onAbort);
    try {
      this.ws?.close(1000, "done");
    } catch {
      // already closing
    }
    this.ws = null;
    this.settle?.reject(err);
  }
}

export class DeepgramTextToSpeech implements TextToSpeech {
  constructor(
    private readonly settings: DeepgramSettings,
    private readonly fetcher: typeof fetch = fetch,
  ) {}

  async synthesize(text: string, signal?: AbortSignal): Promise<Speech> {
    return joinSpeech(this.stream(text, signal), this.settings.sampleRate ?? 16000);
  }

  async *stream(text: string, signal?: AbortSignal): AsyncIterable<Speech> {
    const s = this.settings;
    const rate = s.sampleRate ?? 16000;
    const model = s.model ?? (s.voice?.startsWith("aura") ? s.voice : DEEPGRAM_TTS_MODEL);
    const q = new URLSearchParams({ model, encoding: "linear16", sample_rate: String(rate), container: "none" });
    const call = new ProviderCall("Deepgram text-to-speech", s, deepgramSays, signal);
    const res = await call.fetch(this.fetcher, `${base(s.baseUrl ?? DEEPGRAM_URL)}/v1/speak?${q}`, {
      method: "POST",
      headers: { Authorization: `Token ${s.apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ text }),
    });
    yield* call.pcm(res, rate);
  }
}

// Shared with the ElevenLabs module: one provider request, its errors, and a PCM body read as it arrives.

const base = (url: string) => url.replace(/\/+$/, "");

/** All of a streamed answer as one Speech. */
export async function joinSpeech(pieces: AsyncIterable<Speech>, rate: SampleRate): Promise<Speech> {
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
