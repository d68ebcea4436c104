// Deepgram's and ElevenLabs' own speech APIs against a stand-in that imitates their documented wire shapes
// (test/calls/speech-standin.global.ts, in Node on 127.0.0.1; reached through the pool's outbound carrier simulator,
// which passes unknown hosts through). Each test uses its own API key, under which the stand-in records what it got;
// the key's first word picks the stand-in's behaviour (deny: 401, fail: 500, slow: no answer for 2 s, mute: the live
// socket never answers the end of the turn).
import { describe, expect, inject, it } from "vitest";
import { DeepgramSpeechToText, DeepgramTextToSpeech } from "../../src/agent/deepgram-speech";
import { ElevenLabsSpeechToText, ElevenLabsTextToSpeech } from "../../src/agent/elevenlabs-speech";
import { type Speech, SpeechError } from "../../src/agent/speech";
import { pcm16ToBytes } from "../../src/lib/audio/pcm";

const BASE = `http://127.0.0.1:${inject("speechStandinPort")}`;
const key = (behaviour = "ok") => `${behaviour}-${crypto.randomUUID()}`;

/** What the stand-in recorded under a key (polled: a socket's close lands a moment after the client's). */
async function sent(apiKey: string, until: (log: any[]) => boolean = (l) => l.length > 0): Promise<any[]> {
  for (let i = 0; ; i++) {
    const log = (await (await fetch(`${BASE}/_standin/log?key=${encodeURIComponent(apiKey)}`)).json()) as any[];
    if (until(log) || i > 100) return log;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `n` samples, all `value`: the stand-in reports audio as runs of equal values. */
const run = (n: number, value: number) => new Int16Array(n).fill(value);
const concat = (parts: Int16Array[]) => {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
};
const bytesOf = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

async function pieces(it: AsyncIterable<Speech>): Promise<Speech[]> {
  const out: Speech[] = [];
  for await (const p of it) out.push(p);
  return out;
}

/** The rejection of `p` (fails the test when it resolves). */
async function failure(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a failure");
}

const UTTERANCE: Speech = { samples: concat([run(800, 5), run(1600, -7), run(400, 300)]), rate: 16000 };

describe("Deepgram speech-to-text (pre-recorded)", () => {
  it("posts raw 16-bit PCM with the documented query and Token auth; reads the first alternative's transcript", async () => {
    const k = key();
    const stt = new DeepgramSpeechToText({ apiKey: k, baseUrl: `${BASE}/`, language: "en" });
    const text = await stt.transcribe({ samples: UTTERANCE.samples, rate: 8000 });
    expect(text).toBe("5600 bytes: 5,-7,300");
    const [req] = await sent(k);
    expect(req.path).toBe("/v1/listen");
    expect(req.headers.authorization).toBe(`Token ${k}`);
    expect(req.query).toEqual({
      model: "nova-3",
      encoding: "linear16",
      sample_rate: "8000",
      channels: "1",
      punctuate: "true",
      smart_format: "true",
      language: "en",
    });
    expect(req.headers["content-type"]).not.toMatch(/json/);
    expect(req.bytes).toBe(5600);
  });

  it("sends the configured model; an empty utterance is not sent", async () => {
    const k = key();
    const stt = new DeepgramSpeechToText({ apiKey: k, baseUrl: BASE, model: "nova-2-phonecall" });
    expect(await stt.transcribe({ samples: new Int16Array(0), rate: 16000 })).toBe("");
    await stt.transcribe(UTTERANCE);
    const log = await sent(k);
    expect(log).toHaveLength(1);
    expect(log[0].query.model).toBe("nova-2-phonecall");
  });
});

describe("Deepgram speech-to-text (live WebSocket, Nova)", () => {
  // Live turns are on Flux unless the agent names a Nova model (test/calls/deepgram-turns.test.ts has Flux).
  const NOVA = { model: "nova-3" };
  /** 20 ms frames at 8 kHz, frame i holding the value i + 1. */
  const frames = (n: number) => Array.from({ length: n }, (_, i) => run(160, i + 1));
  const expected = (values: number[]) => `${values.length * 320} bytes: ${values.join(",")}`;
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  it("sends every pushed frame in order (those pushed before the socket opened too) and answers the final transcripts joined", async () => {
    const k = key();
    const stream = new DeepgramSpeechToText({ apiKey: k, baseUrl: BASE, ...NOVA }).open(8000);
    const all = frames(75);
    for (const f of all.slice(0, 10)) stream.push(f); // synchronously: the socket is not open yet
    await new Promise((r) => setTimeout(r, 50));
    for (const f of all.slice(10)) stream.push(f);
    // The stand-in finalizes each second of audio (50 frames) on its own, the rest on Finalize; interims are dropped.
    expect(await stream.finish()).toBe(`${expected(range(1, 50))} ${expected(range(51, 75))}`);
    const [ws] = await sent(k, (l) => l[0]?.closed !== null);
    expect(ws.path).toBe("/v1/listen");
    // Interim results asked for: the words while the caller speaks (the stream's words()), never the turn's text.
    expect(ws.query).toMatchObject({ model: "nova-3", encoding: "linear16", sample_rate: "8000", channels: "1", interim_results: "true" });
    expect(ws.frames).toEqual(all.map(() => 320));
    expect(ws.controls).toEqual(["Finalize", "CloseStream"]);
    expect(ws.closed).toBe(1000);
  });

  it("a turn with nothing said answers an empty text", async () => {
    const stream = new DeepgramSpeechToText({ apiKey: key(), baseUrl: BASE, ...NOVA }).open(16000);
    expect(await stream.finish()).toBe("");
  });

  it("abort() closes the socket without ending the turn, and nothing more is answered", async () => {
    const k = key();
    const stream = new DeepgramSpeechToText({ apiKey: k, baseUrl: BASE, ...NOVA }).open(8000);
    for (const f of frames(5)) stream.push(f);
    await sent(k, (l) => l[0]?.frames.length === 5);
    stream.abort();
    const [ws] = await sent(k, (l) => l[0]?.closed !== null);
    expect(ws.closed).not.toBeNull();
    expect(ws.controls).toEqual([]);
    stream.push(run(160, 9));
    const err = await failure(stream.finish());
    expect(err).not.toBeInstanceOf(SpeechError);
    expect(err.name).toBe("AbortError");
  });

  it("the caller's abort drops the turn: no SpeechError", async () => {
    const k = key();
    const ac = new AbortController();
    const stream = new DeepgramSpeechToText({ apiKey: k, baseUrl: BASE, ...NOVA }).open(8000, ac.signal);
    stream.push(run(160, 1));
    const answer = stream.finish();
    ac.abort();
    const err = await failure(answer);
    expect(err).not.toBeInstanceOf(SpeechError);
    expect(err.name).toBe("AbortError");
  });

  it("a refused handshake is a SpeechError with the status and Deepgram's message, without the key", async () => {
    const k = key("deny");
    const stream = new DeepgramSpeechToText({ apiKey: k, baseUrl: BASE, ...NOVA }).open(8000);
    stream.push(run(160, 1));
    const err = await failure(stream.finish());
    expect(err).toBeInstanceOf(SpeechError);
    expect(err.status).toBe(401);
    expect(err.message).toMatch(/^Deepgram live speech-to-text answered HTTP 401: Invalid credentials/);
    expect(err.message).not.toContain(k);
  });

  it("no answer to the end of the turn is a SpeechError after the time limit, and the socket is closed", async () => {
    const k = key("mute");
    const stream = new DeepgramSpeechToText({ apiKey: k, baseUrl: BASE, timeoutMs: 300, ...NOVA }).open(8000);
    stream.push(run(160, 1));
    // Longer than the limit before the turn ends: the limit does not cut an open socket.
    await new Promise((r) => setTimeout(r, 500));
    const err = await failure(stream.finish());
    expect(err).toBeInstanceOf(SpeechError);
    expect(err.message).toBe("Deepgram live speech-to-text timed out after 300 ms");
    const [ws] = await sent(k, (l) => l[0]?.closed !== null);
    expect(ws.controls).toEqual(["Finalize", "CloseStream"]);
    expect(ws.closed).not.toBeNull();
  });
});

describe("Deepgram text-to-speech", () => {
  it("posts {text} to /v1/speak for raw linear16 at 16 kHz; streams the audio in pieces, an odd-length chunk carried over", async () => {
    const k = key();
    const tts = new DeepgramTextToSpeech({ apiKey: k, baseUrl: BASE });
    const got = await pieces(tts.stream("Hello there."));
    const [req] = await sent(k);
    expect(req.path).toBe("/v1/speak");
    expect(req.headers.authorization).toBe(`Token ${k}`);
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.query).toEqual({ model: "aura-2-thalia-en", encoding: "linear16", sample_rate: "16000", container: "none" });
    expect(req.body).toEqual({ text: "Hello there." });
    expect(got.length).toBeGreaterThanOrEqual(2);
    expect(got.every((p) => p.rate === 16000)).toBe(true);
    expect(pcm16ToBytes(concat(got.map((p) => p.samples)))).toEqual(bytesOf(req.sent));
  });

  it("synthesize answers the whole sentence; model and rate are configuration", async () => {
    const k = key();
    const tts = new DeepgramTextToSpeech({ apiKey: k, baseUrl: BASE, voice: "aura-2-andromeda-en", sampleRate: 24000 });
    const speech = await tts.synthesize("Bye.");
    const [req] = await sent(k);
    expect(req.query).toMatchObject({ model: "aura-2-andromeda-en", sample_rate: "24000" });
    expect(speech.rate).toBe(24000);
    expect(pcm16ToBytes(speech.samples)).toEqual(bytesOf(req.sent));
  });
});

describe("ElevenLabs text-to-speech", () => {
  it("posts {text, model_id} to the voice's stream with xi-api-key and pcm_16000; the pieces are the server's PCM exactly", async () => {
    const k = key();
    const tts = new ElevenLabsTextToSpeech({ apiKey: k, baseUrl: BASE, voice: "JBFqnCBsd6RMkjVDRZzb" });
    const got = await pieces(tts.stream("How are you today?"));
    const [req] = await sent(k);
    expect(req.path).toBe("/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb/stream");
    expect(req.query).toEqual({ output_format: "pcm_16000" });
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.body).toEqual({ text: "How are you today?", model_id: "eleven_flash_v2_5" });
    expect(got.length).toBeGreaterThanOrEqual(2);
    expect(got.every((p) => p.rate === 16000)).toBe(true);
    expect(pcm16ToBytes(concat(got.map((p) => p.samples)))).toEqual(bytesOf(req.sent));
  });

  it("synthesize: the configured model, language and rate", async () => {
    const k = key();
    const tts = new ElevenLabsTextToSpeech({ apiKey: k, baseUrl: BASE, voice: "v 1", model: "eleven_turbo_v2_5", language: "de", sampleRate: 8000 });
    const speech = await tts.synthesize("Guten Tag.");
    const [req] = await sent(k);
    expect(req.voice).toBe("v 1");
    expect(req.query).toEqual({ output_format: "pcm_8000" });
    expect(req.body).toEqual({ text: "Guten Tag.", model_id: "eleven_turbo_v2_5", language_code: "de" });
    expect(speech.rate).toBe(8000);
    expect(pcm16ToBytes(speech.samples)).toEqual(bytesOf(req.sent));
  });

  it("needs a voice", () => {
    expect(() => new ElevenLabsTextToSpeech({ apiKey: "k" })).toThrow(SpeechError);
  });

  it("a listener that stops early (a barge-in) ends the download", async () => {
    const k = key();
    const tts = new ElevenLabsTextToSpeech({ apiKey: k, baseUrl: BASE, voice: "v" });
    for await (const _ of tts.stream("Interrupted.")) break;
    const [req] = await sent(k, (l) => l[0]?.cut !== undefined);
    expect(req.cut).toBe(true);
  });
});

describe("ElevenLabs speech-to-text", () => {
  it("posts a multipart form with model_id and a WAV file; reads the text", async () => {
    const k = key();
    const stt = new ElevenLabsSpeechToText({ apiKey: k, baseUrl: BASE, language: "en" });
    expect(await stt.transcribe(UTTERANCE)).toBe("16000 Hz, 5600 bytes: 5,-7,300");
    const [req] = await sent(k);
    expect(req.path).toBe("/v1/speech-to-text");
    expect(req.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    expect(req.fields).toEqual({ model_id: "scribe_v1", language_code: "en", tag_audio_events: "false" });
    expect(req.file).toEqual({ name: "utterance.wav", type: "audio/wav", bytes: 44 + 5600 });
  });
});

describe("provider failures", () => {
  const cases = [
    ["Deepgram speech-to-text", (apiKey: string, t?: number) => new DeepgramSpeechToText({ apiKey, baseUrl: BASE, timeoutMs: t }).transcribe(UTTERANCE)],
    ["Deepgram text-to-speech", (apiKey: string, t?: number) => new DeepgramTextToSpeech({ apiKey, baseUrl: BASE, timeoutMs: t }).synthesize("Hi.")],
    [
      "ElevenLabs text-to-speech",
      (apiKey: string, t?: number) => new ElevenLabsTextToSpeech({ apiKey, baseUrl: BASE, voice: "v", timeoutMs: t }).synthesize("Hi."),
    ],
    ["ElevenLabs speech-to-text", (apiKey: string, t?: number) => new ElevenLabsSpeechToText({ apiKey, baseUrl: BASE, timeoutMs: t }).transcribe(UTTERANCE)],
  ] as const;
  const said401 = (provider: string) => (provider.startsWith("Deepgram") ? "Invalid credentials" : "Invalid API key");
  const said500 = (provider: string) => (provider.startsWith("Deepgram") ? "The model is unavailable." : "Voice generation failed.");

  for (const [provider, call] of cases) {
    it(`${provider}: 401 and 500 are SpeechErrors with the status and the provider's message, never the key`, async () => {
      const denied = key("deny");
      const e401 = await failure(call(denied));
      expect(e401).toBeInstanceOf(SpeechError);
      expect(e401.status).toBe(401);
      expect(e401.message).toMatch(new RegExp(`^${provider} answered HTTP 401: ${said401(provider)}`));
      expect(e401.message).not.toContain(denied);
      const e500 = await failure(call(key("fail")));
      expect(e500).toBeInstanceOf(SpeechError);
      expect(e500.status).toBe(500);
      expect(e500.message).toBe(`${provider} answered HTTP 500: ${said500(provider)}`);
    });

    it(`${provider}: a slow answer is a SpeechError after the time limit`, async () => {
      const err = await failure(call(key("slow"), 200));
      expect(err).toBeInstanceOf(SpeechError);
      expect(err.status).toBeNull();
      expect(err.message).toBe(`${provider} timed out after 200 ms`);
    });
  }

  it("an unreachable endpoint is a SpeechError", async () => {
    const err = await failure(new DeepgramSpeechToText({ apiKey: "k", baseUrl: "http://127.0.0.1:1" }).transcribe(UTTERANCE));
    expect(err).toBeInstanceOf(SpeechError);
    expect(err.message).toMatch(/^Deepgram speech-to-text could not be reached/);
    const live = new DeepgramSpeechToText({ apiKey: "k", baseUrl: "http://127.0.0.1:1", model: "nova-3" }).open(8000);
    const liveErr = await failure(live.finish());
    expect(liveErr).toBeInstanceOf(SpeechError);
    expect(liveErr.message).toMatch(/^Deepgram live speech-to-text could not be reached/);
  });

  it("the caller's abort stops the call and is not reported as a provider failure", async () => {
    const ac = new AbortController();
    const pending = new DeepgramSpeechToText({ apiKey: key("slow"), baseUrl: BASE }).transcribe(UTTERANCE, ac.signal);
    setTimeout(() => ac.abort(), 50);
    const err = await failure(pending);
    expect(err).not.toBeInstanceOf(SpeechError);
    expect(err.name).toBe("AbortError");

    // Mid-stream: the pieces stop with the abort.
    const mid = new AbortController();
    const got: Speech[] = [];
    const streamErr = await failure(
      (async () => {
        for await (const p of new ElevenLabsTextToSpeech({ apiKey: key(), baseUrl: BASE, voice: "v" }).stream("Stop me.", mid.signal)) {
          got.push(p);
          mid.abort();
        }
      })(),
    );
    expect(streamErr).not.toBeInstanceOf(SpeechError);
    expect(streamErr.name).toBe("AbortError");
    expect(got).toHaveLength(1);
  });
});
