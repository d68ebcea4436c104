// Types of cost.js, the one rate table: the dashboard loads it as it is, and the Worker imports it for results.csv.
export type Engines = { llm: string; stt: string; tts: string };
type SpeechRate = { perMinute: number; perThousandChars?: undefined } | { perThousandChars: number; perMinute?: undefined };
export declare const RATES_SOURCE: { url: string; revision: string; read: string };
export declare const DEFAULT_ENGINES: Engines;
export declare const CHARS_PER_SPEECH_MINUTE: number;
export declare const RATES: {
  carrierPerMinute: Record<string, number> & { default: number };
  stt: Record<string, SpeechRate>;
  tts: Record<string, SpeechRate>;
  llm: Record<string, { inputPerMillion: number; outputPerMillion: number }>;
};
export type CostInput = {
  usage?: { stt_seconds?: number; tts_seconds?: number; input_tokens?: number; output_tokens?: number } | null;
  duration_seconds?: number | null;
  provider?: string | null;
  direction?: string | null;
};
/** A part is null when its engine has no rate in the table; `total` adds the parts that have one. */
export type Cost = { carrier: number; stt: number | null; tts: number | null; model: number | null; total: number; unpriced: string[] };
export declare function enginesOf(configurations: unknown): Engines;
export declare function estimateCost(run: CostInput, engines?: Engines, rates?: typeof RATES): Cost | null;
export declare function turnTimings<T extends { role: string; start_ms: number; end_ms: number }>(
  transcript: T[],
): Array<T & { length_ms: number; wait_ms: number | null }>;
export declare const usd: (v: number) => string;
