// A run's hand-over to a person (`workflow_runs.transfer`): what was asked, how the carrier was asked, and how it
// went. One JSON object per run (the latest transfer: a warm one nobody answered may be followed by another); the
// fields the carrier's callbacks need later (the person's leg, the conference) are kept beside what the API shows.
import { z } from "@hono/zod-openapi";
import type { TransferSettled } from "../session/ports";

export type { TransferSettled };
export type TransferMode = "cold" | "warm";

export type StoredTransfer = {
  destination: string;
  mode: TransferMode;
  requested_mode: TransferMode;
  requested_at: string;
  /** null while the person's phone rings (warm). */
  outcome: TransferSettled | null;
  outcome_at: string | null;
  message: string | null;
  timeout_seconds: number;
  /** The caller ID the person sees. */
  from: string | null;
  /** Warm: the person's leg at the carrier, and the conference both legs join. */
  leg_id: string | null;
  room: string | null;
  /** Warm: the whisper WAV's key in the uploads bucket (null: none, the text is spoken). */
  whisper_key: string | null;
  /** Warm: the summary as text (what a carrier speaks where no audio was given). */
  whisper_text: string | null;
};

/**
 * How long past the ring time the whisper is served: the carrier fetches it when the person answers, within the
 * transfer's `timeout_seconds`; the margin covers a slow answer and the carrier's own retries.
 */
export const WHISPER_GRACE_SECONDS = 120;

/** When the whisper link stops working (ms since the epoch): the transfer's own time, so no link outlives its call. */
export function whisperExpiresAt(t: Pick<StoredTransfer, "requested_at" | "timeout_seconds">): number {
  const at = Date.parse(t.requested_at);
  return Number.isFinite(at) ? at + (t.timeout_seconds + WHISPER_GRACE_SECONDS) * 1000 : 0;
}

export const RunTransfer = z
  .object({
    destination: z.string().openapi({ description: "Who the call was handed to: E.164, or for a PBX a dial string or SIP URI" }),
    mode: z.enum(["cold", "warm"]).openapi({ description: "How it was handed over (warm falls back to cold where the carrier offers only cold)" }),
    requested_mode: z.enum(["cold", "warm"]).openapi({ description: "The mode the agent asked for" }),
    requested_at: z.string(),
    outcome: z
      .enum(["connected", "no_answer", "failed"])
      .nullable()
      .openapi({ description: "connected: the caller is with the person and edgedial left the call; null while the person's phone rings" }),
    outcome_at: z.string().nullable(),
    message: z.string().nullable().openapi({ description: "Why it did not connect (the carrier's or the calling policy's words)" }),
  })
  .openapi("RunTransfer");

/** The API's view of the stored record (the carrier-side fields stay inside). */
export function transferView(t: Record<string, unknown> | null | undefined): z.infer<typeof RunTransfer> | null {
  if (!t || typeof t.destination !== "string") return null;
  const s = t as unknown as StoredTransfer;
  return {
    destination: s.destination,
    mode: s.mode,
    requested_mode: s.requested_mode ?? s.mode,
    requested_at: s.requested_at,
    outcome: s.outcome ?? null,
    outcome_at: s.outcome_at ?? null,
    message: s.message ?? null,
  };
}

/** The record settled: its outcome, when, and why (a settled one is never changed again). */
export function settled(t: StoredTransfer, outcome: TransferSettled, message: string | null, at: string): StoredTransfer {
  if (t.outcome) return t;
  return { ...t, outcome, outcome_at: at, message };
}
