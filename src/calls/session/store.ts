// The call session's own record: one typed object, read once when the object starts and written through field by
// field (each field one row of the `kv` table, so a frequent write, the clock, stays small). Everything a call
// needs to go on after the object restarts is here or in the `turns` and `recording` tables.
import type { DoSql } from "../../lib/do-sql";
import type { ProviderName } from "../../telephony/providers/types";
import type { AgentName } from "./agents";
import type { EndReason, VoicemailAction } from "../../agent/voice-agent";

export type CampaignAttempt = { campaignId: number; contactId: number; attempt: number };

export type SessionRecord = {
  /** Set by the first media connection: the run the session belongs to (null: never connected). */
  runId: number | null;
  orgId: number;
  provider: ProviderName | null;
  /** The prepared agent (tests, the demo), else the deployment's. */
  agent: AgentName | null;
  greeting: string;
  greetingRecording: string | null;
  answeredBy: string | null;
  voicemail: VoicemailAction;
  campaign: CampaignAttempt | null;
  variables: Record<string, string>;
  /** Whether the call is recorded (null: not said yet; the organization's setting decides at the start). */
  record: boolean | null;
  silenceMs: number | null;
  maxMs: number | null;
  /** The carrier's id of the current stream (a resumed call gets a new one). */
  streamId: string | null;
  /** Wall-clock time the stream first started (the start of the call's audio), and its length limit counts from. */
  startedWall: number | null;
  /** The call's audio clock and the wall-clock time it was read at, saved by the heartbeat so a resume goes on. */
  clockMs: number;
  clockWall: number | null;
  /** Since when no media socket has been attached while the call is live (the resume grace counts from it). */
  lostSince: number | null;
  /** How many times the call's media came back after a loss. */
  resumes: number;
  /** The agent's own state at its last stable point (the conversation's node, history, gathered values). */
  agentState: unknown;
  ended: boolean;
  endReason: EndReason | null;
  /** What the call's end adds to the run's notes (why the media failed, say). */
  endNote: string | null;
  /** The stream's audio rate (the recording's), once it started. */
  rate: number | null;
  recUpload: string | null;
  recParts: R2UploadedPart[];
};

const DEFAULTS: SessionRecord = {
  runId: null,
  orgId: 0,
  provider: null,
  agent: null,
  greeting: "",
  greetingRecording: null,
  answeredBy: null,
  voicemail: "hang_up",
  campaign: null,
  variables: {},
  record: null,
  silenceMs: null,
  maxMs: null,
  streamId: null,
  startedWall: null,
  clockMs: 0,
  clockWall: null,
  lostSince: null,
  resumes: 0,
  agentState: null,
  ended: false,
  endReason: null,
  endNote: null,
  rate: null,
  recUpload: null,
  recParts: [],
};

/** The kv key of each field: the names the first version of the session stored them under, where it had them. */
const KEYS: Record<keyof SessionRecord, string> = {
  runId: "run_id",
  orgId: "org_id",
  provider: "provider",
  agent: "agent",
  greeting: "greeting",
  greetingRecording: "greeting_recording",
  answeredBy: "answered_by",
  voicemail: "voicemail",
  campaign: "campaign",
  variables: "variables",
  record: "record",
  silenceMs: "silence_ms",
  maxMs: "max_ms",
  streamId: "stream_id",
  startedWall: "started_wall",
  clockMs: "clock_ms",
  clockWall: "clock_wall",
  lostSince: "lost_since",
  resumes: "resumes",
  agentState: "agent_state",
  ended: "ended",
  endReason: "end_reason",
  endNote: "end_note",
  rate: "rate",
  recUpload: "rec_upload",
  recParts: "rec_parts",
};

type Codec = { read(v: string): unknown; write(v: unknown): string };
const text: Codec = { read: (v) => v, write: (v) => String(v) };
const num: Codec = { read: (v) => Number(v), write: (v) => String(v) };
const flag: Codec = { read: (v) => v === "1", write: (v) => (v ? "1" : "0") };
const json: Codec = { read: (v) => JSON.parse(v), write: (v) => JSON.stringify(v) };
const CODECS: Record<keyof SessionRecord, Codec> = {
  runId: num,
  orgId: num,
  provider: text,
  agent: text,
  greeting: text,
  greetingRecording: text,
  answeredBy: text,
  voicemail: text,
  campaign: json,
  variables: json,
  record: flag,
  silenceMs: num,
  maxMs: num,
  streamId: text,
  startedWall: num,
  clockMs: num,
  clockWall: num,
  lostSince: num,
  resumes: num,
  agentState: json,
  ended: flag,
  endReason: text,
  endNote: text,
  rate: num,
  recUpload: text,
  recParts: json,
};

const FIELD_OF = new Map(Object.entries(KEYS).map(([field, key]) => [key, field as keyof SessionRecord]));

export class SessionStore {
  private record: SessionRecord;

  constructor(private readonly db: DoSql) {
    this.record = { ...DEFAULTS };
  }

  /** Reads the record (after the schema is migrated). */
  load(): void {
    const r: Record<string, unknown> = { ...DEFAULTS };
    for (const { k, v } of this.db.all<{ k: string; v: string }>`SELECT k, v FROM kv`) {
      const field = FIELD_OF.get(k);
      if (field) r[field] = CODECS[field].read(v);
    }
    this.record = r as SessionRecord;
  }

  get current(): Readonly<SessionRecord> {
    return this.record;
  }

  /** Writes the given fields (null or undefined deletes the field's row: it reads as its default again). */
  set(patch: Partial<SessionRecord>): void {
    for (const [field, value] of Object.entries(patch) as [keyof SessionRecord, unknown][]) {
      const key = KEYS[field];
      if (value === null || value === undefined) this.db.run`DELETE FROM kv WHERE k = ${key}`;
      else this.db.putKv(key, CODECS[field].write(value));
      (this.record as Record<string, unknown>)[field] = value ?? DEFAULTS[field];
    }
  }
}
