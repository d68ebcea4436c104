// Workers AI's turn-detection model (Pipecat's Smart Turn v2) through the deployment's AI binding: whether the
// caller's utterance so far is a complete turn. It judges the audio alone, so it serves any speech engine that has no
// turn events of its own (Nova-3 on Workers AI, Deepgram's Nova and ElevenLabs' Scribe with the agent's key).
import { Resampler } from "../lib/audio/resample";
import { wavFile } from "../lib/audio/wav";
import type { Speech, SpeechToText } from "./speech";
import type { AiRunner } from "./workers-ai-model";

/** The turn-detection model Workers AI hosts: audio in, `is_complete` / `probability` out. */
export const WORKERS_AI_TURN_MODEL = "@cf/pipecat-ai/smart-turn-v2";
/** Smart Turn hears the last 8 s of the turn, at 16 kHz. */
const TURN_MODEL_WINDOW_S = 8;

export type TurnModel = NonNullable<SpeechToText["endOfTurn"]>;

/** Smart Turn's verdict on the utterance so far (the last 8 s, as 16 kHz WAV): is the caller's turn complete? */
export function smartTurn(ai: AiRunner): TurnModel {
  return async (audio: Speech) => {
    const samples = audio.samples.subarray(Math.max(0, audio.samples.length - audio.rate * TURN_MODEL_WINDOW_S));
    const wide = audio.rate === 16000 ? samples : new Resampler(audio.rate, 16000).convert(samples);
    let out: any;
    try {
      out = await ai.run(WORKERS_AI_TURN_MODEL, { audio: { body: wavFile(wide, 16000), contentType: "audio/wav" } });
    } catch (err) {
      throw new Error(`Workers AI turn detection failed: ${String((err as Error)?.message ?? err)}`);
    }
    if (typeof out?.is_complete === "boolean") return out.is_complete;
    if (typeof out?.probability === "number") return out.probability >= 0.5;
    throw new Error("Workers AI turn detection answered no verdict");
  };
}
