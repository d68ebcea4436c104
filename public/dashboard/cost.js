// The estimated cost of a call from its usage, priced per engine from a dated rate table: list prices in US dollars.
// An estimate for orientation, not a bill: change the numbers to your own contracts. The one rate table: the Worker
// imports it too (results.csv's cost_usd), and docs/dashboard.md and docs/deployment.md describe it.

/** Where the Workers AI prices come from, and the revision of that page they were copied from. */
export const RATES_SOURCE = {
  url: "https://developers.cloudflare.com/workers-ai/platform/pricing/",
  revision: "2025-08-27 (cloudflare-docs pull request 24748)",
  read: "2026-11-28",
};

/** The engines an agent uses when its voice_agent settings name none (src/agent/workers-ai-*.ts). */
export const DEFAULT_ENGINES = {
  llm: "workers-ai:@cf/meta/llama-3.3-70b-instruct-fp8-fast",
  stt: "workers-ai:@cf/deepgram/nova-3",
  tts: "workers-ai:@cf/deepgram/aura-1",
};

/**
 * Usage records seconds of synthesized speech, and speech engines priced by text are billed per character: about 15
 * characters a second of speech (150 words a minute) converts one into the other.
 */
export const CHARS_PER_SPEECH_MINUTE = 900;

export const RATES = {
  /** Carrier minutes, per started minute of the call (Twilio's US outbound list price; the sandbox costs nothing). */
  carrierPerMinute: { default: 0.014, sandbox: 0, ari: 0 },
  /** Speech to text, per minute of audio heard. Calls stream to Deepgram models over a WebSocket, priced so. */
  stt: {
    "workers-ai:@cf/deepgram/nova-3": { perMinute: 0.0092 },
    "workers-ai:@cf/openai/whisper": { perMinute: 0.0005 },
    "workers-ai:@cf/openai/whisper-large-v3-turbo": { perMinute: 0.0005 },
  },
  /** Text to speech, per 1 000 characters or per minute of speech. */
  tts: {
    "workers-ai:@cf/deepgram/aura-1": { perThousandChars: 0.015 },
    "workers-ai:@cf/myshell-ai/melotts": { perMinute: 0.0002 },
  },
  /** Model tokens, per million read and written. */
  llm: {
    "workers-ai:@cf/meta/llama-3.3-70b-instruct-fp8-fast": { inputPerMillion: 0.293, outputPerMillion: 2.253 },
    "workers-ai:@cf/meta/llama-3.1-70b-instruct-fp8-fast": { inputPerMillion: 0.293, outputPerMillion: 2.253 },
    "workers-ai:@cf/meta/llama-3.1-8b-instruct-fp8-fast": { inputPerMillion: 0.045, outputPerMillion: 0.384 },
    "workers-ai:@cf/meta/llama-3.1-8b-instruct": { inputPerMillion: 0.282, outputPerMillion: 0.827 },
    "workers-ai:@cf/meta/llama-3.2-3b-instruct": { inputPerMillion: 0.051, outputPerMillion: 0.335 },
  },
};

/**
 * The engine ids (`provider:model`) an agent's workflow_configurations choose: the first engine of each part, as a
 * call starts with it (fallbacks are used only when it fails). Scripted engines are named `scripted`.
 */
export function enginesOf(configurations) {
  const v = configurations?.voice_agent ?? {};
  const id = (part, legacyModel) => {
    const c = v[part];
    if (!c || c.provider === "workers-ai") {
      const model = c?.model ?? legacyModel;
      return model ? `workers-ai:${model}` : DEFAULT_ENGINES[part];
    }
    return c.model ? `${c.provider}:${c.model}` : c.provider;
  };
  return { llm: id("llm", v.llm_model), stt: id("stt", v.stt_model), tts: id("tts", v.tts_model) };
}

// A part's price, or null when the table has no rate for its engine (a keyed provider: priced by your contract).
function price(rate, minutes) {
  if (!rate) return null;
  return rate.perMinute != null ? minutes * rate.perMinute : ((minutes * CHARS_PER_SPEECH_MINUTE) / 1000) * rate.perThousandChars;
}
const free = (engine) => engine === "scripted";

/**
 * Each part of the estimate and the total (of the parts priced); null when the run has neither usage nor a duration.
 * A part whose engine the table does not price is null, and `unpriced` names those engines.
 */
export function estimateCost(run, engines = DEFAULT_ENGINES, rates = RATES) {
  const u = run.usage;
  if (!u && run.duration_seconds == null) return null;
  const minutes = run.duration_seconds ? Math.ceil(run.duration_seconds / 60) : 0;
  const carrierRate = rates.carrierPerMinute[run.provider] ?? rates.carrierPerMinute.default;
  const tokens = rates.llm[engines.llm];
  const parts = {
    carrier: run.direction === "web" ? 0 : minutes * carrierRate,
    stt: free(engines.stt) ? 0 : price(rates.stt[engines.stt], (u?.stt_seconds ?? 0) / 60),
    tts: free(engines.tts) ? 0 : price(rates.tts[engines.tts], (u?.tts_seconds ?? 0) / 60),
    model: free(engines.llm) ? 0 : tokens ? ((u?.input_tokens ?? 0) * tokens.inputPerMillion + (u?.output_tokens ?? 0) * tokens.outputPerMillion) / 1e6 : null,
  };
  const unpriced = [];
  if (parts.stt === null) unpriced.push(engines.stt);
  if (parts.tts === null) unpriced.push(engines.tts);
  if (parts.model === null) unpriced.push(engines.llm);
  const total = Object.values(parts).reduce((a, b) => a + (b ?? 0), 0);
  return { ...parts, total, unpriced };
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
