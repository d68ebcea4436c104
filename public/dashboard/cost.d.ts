// Types of cost.js, the one rate table: the dashboard loads it as it is, and the Worker imports it for results.csv.
export declare const RATES: {
  carrierPerMinute: Record<string, number> & { default: number };
  sttPerMinute: number;
  ttsPerMinute: number;
  inputPerMillion: number;
  outputPerMillion: number;
};
export type CostInput = {
  usage?: { stt_seconds?: number; tts_seconds?: number; input_tokens?: number; output_tokens?: number } | null;
  duration_seconds?: number | null;
  provider?: string | null;
  direction?: string | null;
};
export type Cost = { carrier: number; stt: number; tts: number; model: number; total: number };
export declare function estimateCost(run: CostInput, rates?: typeof RATES): Cost | null;
export declare function turnTimings<T extends { role: string; start_ms: number; end_ms: number }>(
  transcript: T[],
): Array<T & { length_ms: number; wait_ms: number | null }>;
export declare const usd: (v: number) => string;
