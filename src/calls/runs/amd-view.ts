// Who answered an outbound call as the agent judged it (answering-machine detection, docs/answering-machines.md), as
// GET /workflow/{id}/runs/{run_id} shows it: read from the run's details object (`amd`, kept there by the session,
// src/calls/session/outcome.ts), in the API's snake_case. The stored record's shape is the classifier's
// (src/agent/amd/classifier.ts, AmdRecord); anything not in that shape is left out rather than shown half.
import { z } from "@hono/zod-openapi";
import { AMD_CLASSES, type AmdClass } from "../../agent/amd/classifier";

const ms = z.number().int();

export const RunAmd = z
  .object({
    class: z.enum(AMD_CLASSES).openapi({
      description:
        "human, machine_greeting, beep (a mailbox ready to record), ivr_menu, call_screening, fax_tone (a fax or modem) or silence (nothing heard for 5 s)",
    }),
    reason: z.string().openapi({ description: "Why, in words (e.g. `speech ran on past 3000 ms`)", example: "a 900 ms opening, then a pause" }),
    decided_ms: ms.openapi({ description: "How long after the answer it was decided" }),
    evidence: z
      .object({
        first_voice_ms: ms.nullable().openapi({ description: "When the callee's voice first came, ms after the answer (null: never)" }),
        longest_speech_ms: ms.openapi({ description: "The longest stretch of speech (pauses under 800 ms bridged)" }),
        voiced_ms: ms.openapi({ description: "Voice heard in all until it was decided" }),
        pause_ms: ms.nullable().openapi({ description: "The quiet after the opening, when that decided (a person waiting for the caller)" }),
        keyword: z.string().nullable().openapi({ description: "The words that decided it (a machine's, an IVR's, a screening service's), if any" }),
        tones: z
          .array(z.object({ freq_hz: z.number(), start_ms: ms, end_ms: ms }))
          .openapi({ description: "Tones heard (a beep, a fax's calling tone), ms after the answer" }),
      })
      .openapi({ description: "What it was decided on" }),
    beep_hz: z.number().nullable().openapi({ description: "On a machine: the beep's frequency (null: no beep came)" }),
    beep_end_ms: ms.nullable().openapi({ description: "On a machine: when its beep ended, ms after the answer" }),
    message_ms: ms.nullable().openapi({ description: "When the agent's voicemail message started, ms after the answer (null: none was left)" }),
  })
  .openapi("RunAmd");
export type RunAmd = z.infer<typeof RunAmd>;

const int = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? Math.round(v) : null);

/** The stored record as the API shows it; null for a run the agent did not judge (inbound, web, a carrier's verdict). */
export function amdView(stored: Record<string, unknown> | null | undefined): RunAmd | null {
  if (!stored || !AMD_CLASSES.includes(stored.cls as AmdClass)) return null;
  const e = (stored.evidence ?? {}) as Record<string, unknown>;
  const tones = Array.isArray(e.tones) ? (e.tones as Record<string, unknown>[]) : [];
  return {
    class: stored.cls as AmdClass,
    reason: typeof stored.reason === "string" ? stored.reason : "",
    decided_ms: int(stored.decideMs) ?? 0,
    evidence: {
      first_voice_ms: int(e.firstVoiceMs),
      longest_speech_ms: int(e.longestSpeechMs) ?? 0,
      voiced_ms: int(e.voicedMs) ?? 0,
      pause_ms: int(e.pauseMs),
      keyword: typeof e.keyword === "string" ? e.keyword : null,
      tones: tones.map((t) => ({ freq_hz: Number(t.freqHz), start_ms: int(t.startMs) ?? 0, end_ms: int(t.endMs) ?? 0 })),
    },
    beep_hz: typeof stored.beep_hz === "number" ? stored.beep_hz : null,
    beep_end_ms: int(stored.beep_end_ms),
    message_ms: int(stored.message_ms),
  };
}
