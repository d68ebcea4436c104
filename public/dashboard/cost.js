// The estimated cost of a call from its usage: configuration constants, in US dollars, list prices of the default
// providers as published in 2025 (docs/dashboard.md names the sources). An estimate for orientation, not a bill:
// change the numbers here to your own contracts. The one rate table: the Worker imports it too (results.csv's cost_usd).
export const RATES = {
  /** Carrier minutes, per started minute of the call (Twilio's US outbound list price; the sandbox costs nothing). */
  carrierPerMinute: { default: 0.014, sandbox: 0, ari: 0 },
  /** Speech to text, per minute of audio transcribed (Workers AI Whisper). */
  sttPerMinute: 0.0005,
  /** Text to speech, per minute of speech synthesized (Workers AI MeloTTS, about 1 000 characters a minute). */
  ttsPerMinute: 0.0002,
  /** Model tokens, per million (Workers AI Llama 3.1 8B). */
  inputPerMillion: 0.282,
  outputPerMillion: 0.827,
};

/** Each part of the estimate and the total; null when the run has neither usage nor a duration. */
export function estimateCost(run, rates = RATES) {
  const u = run.usage;
  if (!u && run.duration_seconds == null) return null;
  const minutes = run.duration_seconds ? Math.ceil(run.duration_seconds / 60) : 0;
  const carrierRate = rates.carrierPerMinute[run.provider] ?? rates.carrierPerMinute.default;
  const parts = {
    carrier: run.direction === "web" ? 0 : minutes * carrierRate,
    stt: ((u?.stt_seconds ?? 0) / 60) * rates.sttPerMinute,
    tts: ((u?.tts_seconds ?? 0) / 60) * rates.ttsPerMinute,
    model: ((u?.input_tokens ?? 0) * rates.inputPerMillion + (u?.output_tokens ?? 0) * rates.outputPerMillion) / 1e6,
  };
  return { ...parts, total: parts.carrier + parts.stt + parts.tts + parts.model };
}

/** Per turn: when it started and ended on the call's audio clock, and for the agent the wait after the callee spoke. */
export function turnTimings(transcript) {
  let lastCalleeEnd = null;
  return transcript.map((t) => {
    const wait = t.role === "agent" && lastCalleeEnd !== null ? t.start_ms - lastCalleeEnd : null;
    if (t.role === "callee") lastCalleeEnd = t.end_ms;
    if (t.role === "agent") lastCalleeEnd = null;
    return { ...t, length_ms: t.end_ms - t.start_ms, wait_ms: wait };
  });
}

export const usd = (v) => `$${v < 0.01 && v > 0 ? v.toFixed(4) : v.toFixed(2)}`;
