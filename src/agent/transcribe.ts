// A turn's words: from its live transcription where one ran (the whole turn again should that fail), else whole.
import { log } from "../lib/log";
import type { Speech, SpeechStream, SpeechToText } from "./speech";

export async function transcribeTurn(stt: SpeechToText, audio: Speech, stream: SpeechStream | null, signal: AbortSignal): Promise<string> {
  const whole = () => stt.transcribe(audio, signal);
  if (!stream) return whole();
  try {
    return await stream.finish();
  } catch (err) {
    if (signal.aborted) throw err;
    log("warning", "live_transcription_failed", { error: String((err as Error)?.message ?? err) });
    return whole();
  }
}
