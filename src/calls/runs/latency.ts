// How fast an agent answers: each reply's timing (stored with its transcript turn) and the per-agent summary of its
// recent calls, p50 and p95 of each figure (nearest rank over the runs' latency columns: within 2–8 % of a measured
// value, see latency-summary.ts; summarizeLatency below is the exact one, over transcripts).
import { z } from "@hono/zod-openapi";
import { STORED_FIGURES } from "../session/latency-record";

const ms = (description: string) => z.number().int().min(0).optional().openapi({ description });

/** An agent turn's timing: every figure in ms after the caller's last word ended; a stage not reached is absent. */
export const TurnTimingSchema = z
  .object({
    end_of_turn_ms: ms("The end of the caller's turn was detected (silence, or a turn-detecting speech model)"),
    stt_final_ms: ms("Speech-to-text gave the turn's final words"),
    model_first_token_ms: ms("The model's first token (or tool call) came"),
    first_sentence_ms: ms("The reply's first sentence was ready to speak"),
    voice_first_byte_ms: ms("The voice's first audio of that sentence came"),
    first_audio_sent_ms: ms("The reply's first frame was sent to the carrier"),
    first_audio_heard_ms: ms("That frame plays to the caller (the caller's last word → first audio heard)"),
    cut_ms: ms("A barge-in: ms of the reply's queued audio the caller never heard"),
    heard_gap_ms: ms(
      "Measured after the call on its two-channel recording, not on the agent's clocks: from the end of the caller's voice to the start of the agent's (absent where the recording shows none, or they overlapped)",
    ),
    cut_words: z.string().optional().openapi({ description: "A barge-in: the words of the reply the caller never heard" }),
    // An agent with fallback engines (voice_agent.*_fallbacks, docs/failover.md): what served this reply and its turn.
    llm_engine: z.string().optional().openapi({ description: "Fallbacks only: the model that answered (e.g. workers-ai:@cf/…)" }),
    stt_engine: z.string().optional().openapi({ description: "Fallbacks only: the speech-to-text engine that gave the caller's words" }),
    tts_engine: z.string().optional().openapi({ description: "Fallbacks only: the voice(s) that spoke the reply" }),
    failovers: z
      .string()
      .optional()
      .openapi({ description: "Fallbacks only: each failover, `part from → to (why)` (429, 5xx, timeout, unreachable), separated by `; `" }),
    failover_count: z.number().int().min(0).optional().openapi({ description: "Fallbacks only: how many failovers this reply took" }),
  })
  .openapi("TurnTiming", {
    description:
      "How long the agent's reply took, stage by stage, in ms after the caller's last word ended (agent turns that answered the caller, on runs from when this was measured)",
  });

export type TurnTimingFigures = z.infer<typeof TurnTimingSchema>;

/** The figures summarized, in the order a reply reaches them (the order the run's latency column stores them in). */
export const LATENCY_FIGURES = STORED_FIGURES;
type Figure = (typeof LATENCY_FIGURES)[number];

const Percentiles = z
  .object({
    count: z.number().int().min(0).openapi({ description: "Replies that reached this stage" }),
    p50: z.number().int().nullable(),
    p95: z.number().int().nullable(),
  })
  .openapi("LatencyPercentiles");

const summaryShape = {
  workflow_id: z.number().int(),
  calls: z.number().int().min(0).openapi({ description: "Recent calls read (those with a transcript, newest first)" }),
  replies: z.number().int().min(0).openapi({ description: "Agent replies among them that carry a timing" }),
  figures: z.object(Object.fromEntries(LATENCY_FIGURES.map((f) => [f, Percentiles])) as Record<Figure, typeof Percentiles>).openapi({
    description:
      "Each TurnTiming figure over those replies (first_audio_heard_ms: the caller's last word → first audio heard, on the agent's clocks; heard_gap_ms: the same gap measured on the calls' recordings)",
  }),
};
/** The figures' summary over a set of runs (the endpoint adds `heard`). */
export type LatencySummary = z.infer<z.ZodObject<typeof summaryShape>>;

const HeardPercentiles = {
  count: z.number().int().min(0).openapi({ description: "Replies whose gap the recordings show" }),
  p50: z.number().int().nullable(),
  p90: z.number().int().nullable(),
};

/** The gap the caller heard (heard_gap_ms) per agent and per carrier: p50 and p90, as the issue asks them. */
export const HeardLatency = z
  .object({
    ...HeardPercentiles,
    carriers: z
      .array(
        z
          .object({
            carrier: z.string().openapi({ description: "The run's provider (twilio, plivo, ..., web for a web call; unknown where none)" }),
            calls: z.number().int().min(0).openapi({ description: "Calls read on this carrier" }),
            ...HeardPercentiles,
          })
          .openapi("CarrierHeardLatency"),
      )
      .openapi({ description: "Per carrier, most calls first" }),
  })
  .openapi("HeardLatency", {
    description: "From the end of the caller's voice to the start of the agent's, measured after each call on its two-channel recording (docs/turn-timing.md)",
  });
export type HeardLatency = z.infer<typeof HeardLatency>;

export const AgentLatency = z
  .object({
    ...summaryShape,
    heard: HeardLatency,
    turn_detection: z.enum(["flux", "smart-turn", "silence"]).openapi({
      description:
        "How the end of the caller's turn is decided for the agent's speech engine as it is set now: flux (Deepgram Flux's end-of-turn events, on Workers AI or Deepgram's API), smart-turn (Workers AI's turn-detection model asked at a short pause) or silence (end_of_turn_ms of quiet alone); the silence bound is the fallback of the first two (docs/turn-taking.md)",
    }),
  })
  .openapi("AgentLatency");
export type AgentLatency = z.infer<typeof AgentLatency>;

/** The nearest-rank percentile `p` (0–100) of ascending `sorted`; null for none. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

type StoredTurn = { role: string; timing?: Record<string, unknown> };

/** The summary over calls' transcripts (each a list of turns, or null). */
export function summarizeLatency(workflowId: number, transcripts: ReadonlyArray<ReadonlyArray<StoredTurn> | null>): LatencySummary {
  const values = Object.fromEntries(LATENCY_FIGURES.map((f) => [f, [] as number[]])) as Record<Figure, number[]>;
  let replies = 0;
  for (const turns of transcripts)
    for (const t of turns ?? []) {
      if (t.role !== "agent" || !t.timing) continue;
      replies++;
      for (const f of LATENCY_FIGURES) {
        const v = t.timing[f];
        if (typeof v === "number" && Number.isFinite(v)) values[f].push(v);
      }
    }
  const figures = Object.fromEntries(
    LATENCY_FIGURES.map((f) => {
      const sorted = values[f].sort((a, b) => a - b);
      return [f, { count: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95) }];
    }),
  ) as LatencySummary["figures"];
  return { workflow_id: workflowId, calls: transcripts.length, replies, figures };
}
