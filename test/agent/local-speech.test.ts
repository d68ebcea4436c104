// The agent's voice in local development: the offline engines speak through the local speech server when
// LOCAL_SPEECH_URL names one (`npm run dev` and the demo run it: eSpeak NG in Node, here the same server started by
// test/dev/local-speech.global.ts), at the agent's rate, in words that sound like a voice; without it, or when it does
// not answer, in the deterministic tones, so no call breaks and the suites stay deterministic.
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { ClipTextToSpeech, TONE_MS_PER_CHAR } from "../../src/agent/clip-speech";
import { enginesFor } from "../../src/agent/engines";
import { LocalSpeechTextToSpeech } from "../../src/agent/local-speech";
import { getDb } from "../../src/lib/db";
import { allowsPrivatePbx } from "../../src/telephony/calling-policy";
import { isVoiceLike, voiceMeasures } from "./voice-like";

const URL_ = inject("localSpeechUrl");
const GREETING = "Hi Alan, do you have a minute?";
const privacy = (e: Env) => () => allowsPrivatePbx(getDb(e), 1);

async function offlineEngines(extra: Record<string, string>) {
  const e = { ...env, OFFLINE_ENGINES: "true", ...extra } as unknown as Env;
  const choice = await enginesFor(e, 1, {}, privacy(e));
  if (!choice.ok) throw new Error(choice.reason);
  return choice.engines;
}

describe("the local speech server, as the Worker reaches it", () => {
  it("answers the text as 16-bit PCM at the rate asked for, sounding like a voice", async () => {
    const lengths: number[] = [];
    for (const rate of [8000, 16000]) {
      const res = await fetch(`${URL_}/speak`, { method: "POST", body: JSON.stringify({ text: GREETING, rate }) });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-sample-rate")).toBe(String(rate));
      const samples = new Int16Array(await res.arrayBuffer());
      lengths.push(samples.length / rate);
      const m = voiceMeasures(samples, rate);
      expect(isVoiceLike(m), JSON.stringify(m)).toBe(true);
    }
    expect(lengths[0]).toBeGreaterThan(1);
    expect(Math.abs(lengths[0] - lengths[1])).toBeLessThan(0.01);
  }, 60_000);

  it("refuses a rate the agent never uses and an empty text, saying why", async () => {
    for (const [body, code] of [
      [{ text: GREETING, rate: 44100 }, "invalid_rate"],
      [{ text: " ", rate: 8000 }, "invalid_text"],
    ] as const) {
      const res = await fetch(`${URL_}/speak`, { method: "POST", body: JSON.stringify(body) });
      expect(res.status).toBe(422);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    }
  });
});

describe("the offline engines' voice", () => {
  it("speaks through the local speech server when LOCAL_SPEECH_URL names it", async () => {
    const engines = await offlineEngines({ LOCAL_SPEECH_URL: URL_ });
    expect(engines.tts).toBeInstanceOf(LocalSpeechTextToSpeech);
    const speech = await engines.tts.synthesize(GREETING);
    expect(speech.rate).toBe(16000);
    const m = voiceMeasures(speech.samples, speech.rate);
    expect(isVoiceLike(m), JSON.stringify(m)).toBe(true);
  }, 60_000);

  it("speaks in tones without it (npm test, a deployment never sets it), and when it does not answer", async () => {
    const without = await offlineEngines({});
    expect(without.tts).toBeInstanceOf(ClipTextToSpeech);
    const tone = await without.tts.synthesize(GREETING);
    expect(isVoiceLike(voiceMeasures(tone.samples, tone.rate))).toBe(false);
    expect(tone.samples.length).toBe((16000 * TONE_MS_PER_CHAR * GREETING.length) / 1000);

    // A URL that answers no audio (a 404): the tone says it. (A refused connection takes the same path; it is not
    // tried here, where it would print the runtime's "Network connection lost" for every run.)
    const gone = await offlineEngines({ LOCAL_SPEECH_URL: `${URL_}/no-such-route/` });
    expect((await gone.tts.synthesize(GREETING)).samples).toEqual(tone.samples);
  }, 60_000);

  it("is the scripted text-to-speech's voice too (the demo's agent), and never a deployment's", async () => {
    const scripted = { voice_agent: { llm: { provider: "scripted", script: [{ say: "Hello." }] }, tts: { provider: "scripted" } } };
    const dev = { ...env, LOCAL_SPEECH_URL: URL_ } as unknown as Env;
    const choice = await enginesFor(dev, 1, scripted, privacy(dev));
    expect(choice.ok && choice.engines.tts).toBeInstanceOf(LocalSpeechTextToSpeech);
    // A Worker that is not local development (LOCAL_DEV unset) runs no scripted engine, whatever the URL says.
    const deployed = { ...env, LOCAL_SPEECH_URL: URL_, LOCAL_DEV: "" } as unknown as Env;
    expect(await enginesFor(deployed, 1, scripted, privacy(deployed))).toMatchObject({ ok: false, reason: expect.stringMatching(/only local development/) });
  });

  it("stops when the reply is cut off rather than speaking in tones", async () => {
    const engines = await offlineEngines({ LOCAL_SPEECH_URL: URL_ });
    const cut = new AbortController();
    cut.abort();
    await expect(engines.tts.synthesize(GREETING, cut.signal)).rejects.toThrow();
  });
});
