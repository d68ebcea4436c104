// Speech engines as the voice agent uses them: speech-to-text on one utterance of the callee (the agent's own voice
// activity detection cuts the turns), text-to-speech one sentence at a time (speech starts with the first sentence
// of a reply). Providers (Workers AI's Deepgram models, Deepgram's and ElevenLabs' own APIs, the deterministic
// engines of tests and the demo) are one module each.
import type { SampleRate } from "../../lib/audio/resample";

export type Speech = { samples: Int16Array; rate: SampleRate };

export interface SpeechToText {
  transcribe(audio: Speech, signal?: AbortSignal): Promise<string>;
}

export interface TextToSpeech {
  synthesize(text: string, signal?: AbortSignal): Promise<Speech>;
}
