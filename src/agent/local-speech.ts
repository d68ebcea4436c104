// The agent's voice in local development: the speech server `npm run dev` and `npm run demo` run beside the Worker
// (scripts/lib/local-speech.mjs: eSpeak NG in Node, never bundled here), named by LOCAL_SPEECH_URL. Where it is not
// set (`npm test`, a deployment) or does not answer, the agent speaks in the offline tones instead, so a missing
// server never breaks a call and tests stay deterministic.
import type { SampleRate } from "../lib/audio/resample";
import type { Speech, TextToSpeech } from "./speech";

/** How long an utterance may take to synthesize before the tone stands in (eSpeak NG takes ~0.2 s a sentence). */
export const LOCAL_SPEECH_TIMEOUT_MS = 10_000;

/** Whether this isolate has said why the agent speaks in tones (once: each call builds its own engines). */
let warned = false;

export class LocalSpeechTextToSpeech implements TextToSpeech {
  constructor(
    private readonly url: string,
    private readonly fallback: TextToSpeech,
    private readonly rate: SampleRate = 16000,
  ) {}

  async synthesize(text: string, signal?: AbortSignal): Promise<Speech> {
    try {
      const timeout = AbortSignal.timeout(LOCAL_SPEECH_TIMEOUT_MS);
      const res = await fetch(new URL("speak", this.url.endsWith("/") ? this.url : `${this.url}/`), {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ text, rate: this.rate }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      if (!res.ok) throw new Error(`local speech answered ${res.status}`);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const samples = new Int16Array(bytes.length >> 1);
      for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(2 * i, true);
      if (samples.length === 0) throw new Error("local speech answered no audio");
      return { samples, rate: this.rate };
    } catch (err) {
      // Cut off (a barge-in, the call ended): nothing to say. Otherwise the tone says it.
      if (signal?.aborted) throw err;
      if (!warned) {
        warned = true;
        console.warn(`the local speech server (${this.url}) did not speak, so the agent speaks in tones: ${(err as Error)?.message ?? err}`);
      }
      return this.fallback.synthesize(text, signal);
    }
  }
}
