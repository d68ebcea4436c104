// The shape of a data-retention setting: days to keep a run's recording, its transcript and details, and the run
// itself. The organization's policy (privacy/data-policy.routes.ts) and an agent's override
// (workflow_configurations.retention) share it; the purge (privacy/purge.ts) applies it.
import { z } from "@hono/zod-openapi";

/** Ten years: long enough for any legal hold, short enough that a date computed from it never overflows. */
export const MAX_RETENTION_DAYS = 3650;

const days = (what: string) =>
  z
    .number()
    .int()
    .min(1)
    .max(MAX_RETENTION_DAYS)
    .nullable()
    .optional()
    .openapi({ description: `${what} (1–${MAX_RETENTION_DAYS}); null or left out = kept forever`, example: 30 });

export const Retention = z
  .strictObject({
    recordings_days: days("Days a finished call's recording is kept: then the audio is deleted and the run has no recording_url"),
    transcripts_days: days(
      "Days a finished call's transcript, tool calls, gathered context and analysis are kept: then they are deleted and the run shows none",
    ),
    runs_days: days("Days a finished call's run is kept at all: then the run, its recording, details and webhook node deliveries are deleted"),
  })
  .openapi("Retention", {
    description: "How long a finished call's data is kept, counted from the run's creation. The daily purge deletes what expired (docs/retention.md).",
  });

export type RetentionInput = z.infer<typeof Retention>;

/** Every kind resolved: a number of days, or null for forever. */
export type RetentionDays = { recordings_days: number | null; transcripts_days: number | null; runs_days: number | null };

export const RETENTION_KINDS = ["recordings_days", "transcripts_days", "runs_days"] as const;

/** The stored form (nulls kept, so an absent kind reads as forever). */
export const retentionDays = (r: RetentionInput | Record<string, unknown> | null | undefined): RetentionDays => {
  const pick = (k: (typeof RETENTION_KINDS)[number]) => {
    const v = r?.[k];
    return typeof v === "number" && Number.isInteger(v) && v >= 1 ? v : null;
  };
  return { recordings_days: pick("recordings_days"), transcripts_days: pick("transcripts_days"), runs_days: pick("runs_days") };
};
