// Call records (workflow runs) in D1: creation with a unique readable name, the response view.
import { and, eq, sql, type SQL } from "drizzle-orm";
import { z } from "@hono/zod-openapi";
import { workflowRuns } from "../../db/schema";
import { preparedOnce, type Db } from "../../lib/db";
import type { CallStatus } from "../../telephony/providers/types";
import { END_REASONS } from "../../agent/voice-agent";
import { RunTransfer, transferView } from "./transfer-record";
import { TurnTimingSchema } from "./latency";
import { AMD_CLASSES, type AmdClass } from "../../agent/amd/classifier";
import { amdView, RunAmd } from "./amd-view";

/** The agent's actions on the call (HTTP tools, a transfer, key presses), in order. */
const ToolCalls = z
  .array(
    z.object({
      name: z.string(),
      arguments: z.record(z.string(), z.unknown()).openapi({ description: "What the model passed" }),
      status: z.enum(["ok", "error", "timeout", "refused"]),
      http_status: z.number().int().nullable().openapi({ description: "An HTTP tool's answer status, when one came" }),
      duration_ms: z.number().int(),
      error: z.string().optional().openapi({ description: "What went wrong (never a header's value)" }),
      at_ms: z.number().int().optional().openapi({ description: "When it started, from the start of the call's audio" }),
    }),
  )
  .openapi({ description: "The agent's actions during the call (HTTP tools, transfer_call, send_dtmf), once the call ended" });
import { RunAnalysis } from "../../workflows/analysis-schema";

export type RunRow = typeof workflowRuns.$inferSelect;

export const FINAL_STATUSES: ReadonlySet<CallStatus> = new Set(["completed", "busy", "no_answer", "voicemail", "declined", "failed", "canceled", "unknown"]);
export const isFinal = (s: string): boolean => FINAL_STATUSES.has(s as CallStatus);

/** A run's `end_reason`: its call session's reason, else its final status (voicemail is both). */
export const RUN_END_REASONS = [...END_REASONS, "completed", "busy", "no_answer", "declined", "failed", "canceled", "unknown"] as const;
export type RunEndReason = (typeof RUN_END_REASONS)[number];

/** Progress order: a status may only move forward; every final status ranks last. */
export const RANK: Record<CallStatus, number> = {
  queued: 0,
  initiated: 1,
  ringing: 2,
  in_progress: 3,
  completed: 4,
  busy: 4,
  no_answer: 4,
  voicemail: 4,
  declined: 4,
  failed: 4,
  canceled: 4,
  unknown: 4,
};

export const runName = (id: number) => `WR-${id}`;

export const RUN_DIRECTIONS = ["outbound", "inbound", "web"] as const;
export type RunDirection = (typeof RUN_DIRECTIONS)[number];

export type NewRun = {
  orgId: number;
  workflowId: number;
  workflowUuid: string;
  definitionId: number | null;
  campaignId?: number | null;
  contactId?: number | null;
  attempt?: number | null;
  phoneNumber: string;
  fromNumber: string | null;
  initialContext: Record<string, unknown>;
  /** Null for a web call: no carrier, no configuration. */
  telephonyConfigurationId: number | null;
  provider: string;
  leaseId: string | null;
  greetingOverride?: Record<string, unknown> | null;
  voicemailAction?: string | null;
  /** The API key that started it; an expression may read it (a campaign's call: the campaign's creator). */
  createdByKeyId?: number | SQL | null;
  /** `initiated` (with startedAt): recorded as placed, because nothing is written when the carrier accepts it. */
  status?: "queued" | "initiated";
  startedAt?: string;
  /** Who started the call: edgedial dialing out (the default), a caller dialing in, or a browser. */
  direction?: RunDirection;
};

/**
 * Inserts a run (queued unless told otherwise) named after its id (`WR-<id>`: unique because the id is). The name is
 * the id SQLite will give the row, max(id) + 1, in the insert itself (one write); should AUTOINCREMENT skip past a
 * deleted top row, the row is renamed after its actual id.
 */
export async function createRun(db: Db, input: NewRun): Promise<RunRow> {
  const inserted = await db
    .insert(workflowRuns)
    .values({ ...input, name: sql`'WR-' || (SELECT coalesce(max(id), 0) + 1 FROM workflow_runs)`, status: input.status ?? "queued" })
    .returning()
    .get();
  if (inserted.name === runName(inserted.id)) return inserted;
  return db
    .update(workflowRuns)
    .set({ name: runName(inserted.id) })
    .where(eq(workflowRuns.id, inserted.id))
    .returning()
    .get();
}

// Every callback, session write and run page reads a run by id: the query is built once (preparedOnce).
const runById = (db: Db) =>
  db
    .select()
    .from(workflowRuns)
    .where(eq(workflowRuns.id, sql.placeholder("runId")))
    .prepare();
const orgRunById = (db: Db) =>
  db
    .select()
    .from(workflowRuns)
    .where(and(eq(workflowRuns.id, sql.placeholder("runId")), eq(workflowRuns.orgId, sql.placeholder("orgId"))))
    .prepare();

export async function getRun(db: Db, runId: number): Promise<RunRow | null> {
  return (await preparedOnce(db, "run-by-id", runById).get({ runId })) ?? null;
}

/** The organization's run (another organization's is none). */
export async function getOrgRun(db: Db, orgId: number, runId: number): Promise<RunRow | null> {
  return (await preparedOnce(db, "org-run-by-id", orgRunById).get({ runId, orgId })) ?? null;
}

export const WorkflowRun = z
  .object({
    id: z.number().int(),
    name: z.string().openapi({ example: "WR-1042" }),
    workflow_id: z.number().int(),
    workflow_uuid: z.string(),
    campaign_id: z.number().int().nullable(),
    direction: z.enum(RUN_DIRECTIONS).openapi({
      description: "outbound: edgedial dialed (a campaign, the API, a trigger); inbound: a caller dialed one of the organization's numbers; web: a browser",
    }),
    phone_number: z.string().openapi({ description: "The other party: the number dialed, or for an inbound call the caller's number" }),
    from_number: z.string().nullable(),
    initial_context: z.record(z.string(), z.unknown()),
    telephony_configuration_id: z.number().int().nullable(),
    provider: z.string().nullable(),
    provider_call_id: z.string().nullable(),
    status: z.enum([
      "queued",
      "initiated",
      "ringing",
      "in_progress",
      "completed",
      "busy",
      "no_answer",
      "voicemail",
      "declined",
      "failed",
      "canceled",
      "unknown",
    ]),
    answered_by: z.string().nullable(),
    amd_class: z.enum(AMD_CLASSES).nullable().openapi({
      description:
        "Who answered an outbound call as the agent judged it (human, machine_greeting, beep, ivr_menu, call_screening, fax_tone, silence), once the call ended; null when it did not judge (inbound, web, a carrier's verdict first) or for a run from before it was kept. The evidence is `amd` on the run's own page",
    }),
    error: z.string().nullable(),
    notes: z.string().nullable().openapi({ description: "Why the call differed from what was asked (e.g. an audio greeting spoken as text)" }),
    end_reason: z
      .enum(RUN_END_REASONS)
      .nullable()
      .openapi({
        description:
          "Why the call ended, once it has: how its call session ended it (agent_hangup, callee_hangup, callee_silent, dead_air, max_call_seconds, " +
          "media_error, media_lost, provider_failure, transferred, voicemail), else the carrier's final status (completed, busy, no_answer, ...)",
      }),
    created_at: z.string(),
    started_at: z.string().nullable(),
    answered_at: z.string().nullable(),
    ended_at: z.string().nullable(),
    duration_seconds: z.number().int().nullable().openapi({
      description:
        "How long the call lasted in whole seconds. Ended by its session: the call's audio clock from the media's start, which is the recording's length (±1 s); otherwise the carrier's duration",
    }),
    media: z
      .object({
        caller_audio_s: z.number().openapi({ description: "Seconds of the callee's audio the session received" }),
        agent_audio_s: z.number().openapi({ description: "Seconds of the agent's audio sent to the carrier (cut short by a barge-in: what was sent)" }),
        gaps: z.number().int().openapi({ description: "Pauses of 1 s or more in the callee's stream (a carrier's or the service's stall)" }),
        underruns: z.number().int().openapi({ description: "Times the agent's speech ran dry mid-sentence (its next audio not ready in time)" }),
      })
      .nullable()
      .openapi({ description: "What the call's media carried, once its session ended (null: no media session, or a run from before it was measured)" }),
    conversation: z.boolean().nullable().openapi({
      description:
        "Whether a conversation took place: the callee said something the agent understood (a turn of theirs transcribed non-empty). null until its session ended",
    }),
    transcript: z
      .array(
        z.object({
          role: z.enum(["agent", "callee", "tool"]).openapi({ description: "`tool`: an action the agent took (its name, how it went, how long)" }),
          text: z.string(),
          start_ms: z.number().int().openapi({ description: "From the start of the call's audio" }),
          end_ms: z.number().int(),
          interrupted: z.boolean().openapi({ description: "The callee spoke over it and the rest was not played" }),
          timing: TurnTimingSchema.optional(),
        }),
      )
      .openapi({ description: "The conversation's turns, once the call's media session ended (empty before, or without one)" }),
    gathered_context: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ description: "What the voice agent gathered during the call (its nodes' extraction variables), once it ended" }),
    disposition: z.string().nullable().openapi({ description: "The call's disposition, one of the agent's call_disposition_codes, chosen at the end" }),
    usage: z
      .object({ stt_seconds: z.number(), tts_seconds: z.number(), input_tokens: z.number().int(), output_tokens: z.number().int() })
      .nullable()
      .openapi({ description: "The voice agent's cost figures: seconds of speech transcribed and synthesized, model tokens" }),
    recording_url: z
      .string()
      .nullable()
      .openapi({ description: "The call's two-channel WAV (callee left, agent right) once it ended; a signed link valid for 15 minutes" }),
    tool_calls: ToolCalls,
    transfer: RunTransfer.nullable().openapi({
      description: "The agent's hand-over of the call to a person (the latest), once it asked for one: where to, how, and how it went",
    }),
    analysis: RunAnalysis.nullable().openapi({
      description: "The post-call analysis the agent defines (workflow_configurations.analysis), once it ran after the call; null without one",
    }),
    amd: RunAmd.nullable().openapi({
      description:
        "Who answered an outbound call as the agent judged it on the callee's audio and words (answering-machine detection: class, evidence, time to decide), once the call ended; null when it did not judge (inbound, web, a carrier's verdict first). The carrier's own verdict is `answered_by`",
    }),
    created_by_key_id: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The API key that started the call (a campaign's call: the key that created the campaign)" }),
  })
  .openapi("WorkflowRun");

/** A run with what its details object adds beyond the D1 columns (withDetails). */
export type RunWithDetails = RunRow & { amd?: Record<string, unknown> | null };

export function runView(r: RunWithDetails, recordingUrl: string | null = null): z.infer<typeof WorkflowRun> {
  return {
    id: r.id,
    name: r.name,
    workflow_id: r.workflowId,
    workflow_uuid: r.workflowUuid,
    campaign_id: r.campaignId,
    direction: (r.direction as RunDirection | null) ?? "outbound",
    phone_number: r.phoneNumber,
    from_number: r.fromNumber,
    initial_context: r.initialContext ?? {},
    telephony_configuration_id: r.telephonyConfigurationId,
    provider: r.provider,
    provider_call_id: r.providerCallId,
    status: r.status as CallStatus,
    answered_by: r.answeredBy,
    amd_class: (r.amdClass as AmdClass | null) ?? null,
    error: r.error,
    notes: r.notes,
    end_reason: (r.endReason as RunEndReason | null) ?? null,
    created_at: r.createdAt,
    started_at: r.startedAt,
    answered_at: r.answeredAt,
    ended_at: r.endedAt,
    duration_seconds: r.durationSeconds,
    media: r.media ?? null,
    conversation: r.conversation ?? null,
    transcript: (r.transcript ?? []).map((t) => ({ ...t, role: t.role as "agent" | "callee" | "tool" })),
    tool_calls: (r.toolCalls ?? []) as z.infer<typeof ToolCalls>,
    gathered_context: r.gatheredContext ?? null,
    disposition: r.disposition ?? null,
    usage: r.usage ?? null,
    recording_url: recordingUrl,
    transfer: transferView(r.transfer),
    analysis: (r.analysis as RunAnalysis | null) ?? null,
    amd: amdView(r.amd),
    created_by_key_id: r.createdByKeyId,
  };
}

/** The fields a run keeps in its details object, which lists do not read (a page would cost an object per run). */
const BULK = { transcript: true, tool_calls: true, analysis: true, amd: true } as const;

export const WorkflowRunListItem = WorkflowRun.omit(BULK).openapi("WorkflowRunListItem", {
  description:
    "A call as lists show it: every field of the run's detail (GET /workflow/{workflow_id}/runs/{run_id}) except transcript, tool_calls, analysis and amd, which are read from the run's stored details only there (amd's class is in the list as amd_class)",
});

/** A run in a list: its view without the bulk fields. */
export function runListView(r: RunRow, recordingUrl: string | null = null): z.infer<typeof WorkflowRunListItem> {
  const { transcript: _t, tool_calls: _c, analysis: _a, amd: _m, ...item } = runView({ ...r, transcript: null, toolCalls: null, analysis: null }, recordingUrl);
  return item;
}
