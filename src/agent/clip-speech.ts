// Deterministic speech engines for tests, the demo and local development: speech-to-text recognizes known clips
// (committed espeak-ng recordings, registered with their text) by the shape of their loudness over time, which
// survives the carriers' codecs and resampling; text-to-speech plays a registered clip for its exact text and
// otherwise a soft tone as long as the text would take to say (about 60 ms a character), so timing is realistic.
import { rms } from "../lib/audio/level";
import type { SampleRate } from "../lib/audio/resample";
import type { Speech, SpeechToText, TextToSpeech } from "./speech";

export type KnownClip = { text: string; samples: Int16Array; rate: SampleRate };

/** Loudness of each 20 ms, the fingerprint a clip is recognized by. */
function envelope({ samples, rate }: Speech): Float64Array {
  const n = rate / 50;
  const out = new Float64Array(Math.floor(samples.length / n));
  for (let f = 0; f < out.length; f++) out[f] = rms(samples.subarray(f * n, (f + 1) * n));
  return out;
}

/** The best normalized correlation of two envelopes over small shifts (the utterance's cut is not exact). */
function similarity(a: Float64Array, b: Float64Array): number {
  let best = 0;
  for (let lag = -10; lag <= 10; lag++) {
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let i = 0; i < a.length; i++) {
      const j = i + lag;
      const y = j >= 0 && j < b.length ? b[j] : 0;
      ab += a[i] * y;
      aa += a[i] * a[i];
    }
    for (let j = 0; j < b.length; j++) bb += b[j] * b[j];
    if (aa && bb) best = Math.max(best, ab / Math.sqrt(aa * bb));
  }
  return best;
}

export const RECOGNIZE_THRESHOLD = 0.9;

export class ClipSpeechToText implements SpeechToText {
  private readonly known: Array<{ text: string; env: Float64Array }>;

  constructor(clips: KnownClip[]) {
    this.known = clips.map((c) => ({ text: c.text, env: envelope(c) }));
  }

  /** A clip learned during the call (an agent test's persona caller says lines nobody knew before the call). */
  learn(clip: KnownClip): void {
    if (!this.known.some((k) => k.text === clip.text)) this.known.push({ text: clip.text, env: envelope(clip) });
  }

  async transcribe(audio: Speech): Promise<string> {
    const env = envelope(audio);
    let best = { text: "", score: 0 };
    for (const k of this.known) {
      const score = similarity(k.env, env);
      if (score > best.score) best = { text: k.text, score };
    }
    return best.score >= RECOGNIZE_THRESHOLD ? best.text : "";
  }
}

export const TONE_MS_PER_CHAR = 60;

export class ClipTextToSpeech implements TextToSpeech {
  private readonly byText: Map<string, KnownClip>;

  constructor(
    clips: KnownClip[] = [],
    private readonly rate: SampleRate = 16000,
  ) {
    this.byText = new Map(clips.map((c) => [c.text, c]));
  }

  async synthesize(text: string): Promise<Speech> {
    const clip = this.byText.get(text);
    if (clip) return { samples: clip.samples, rate: clip.rate };
    const n = Math.round((this.rate * TONE_MS_PER_CHAR * Math.max(1, text.length)) / 1000);
    const samples = new Int16Array(n);
    for (let i = 0; i < n; i++) samples[i] = Math.round(3000 * Math.sin((2 * Math.PI * 330 * i) / this.rate));
    return { samples, rate: this.rate };
  }
}
