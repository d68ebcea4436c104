// The call session's own record: one typed object, read once when the object starts and written through field by
// field (each field one row of the `kv` table, so a frequent write, the clock, stays small). Everything a call
// needs to go on after the object restarts is here or in the `turns` and `recording` tables.
import type { DoSql } from "../../lib/do-sql";
import type { SessionProvider } from "./web-media";
import type { AgentName } from "./agents";
import type { EndReason, VoicemailAction } from "../../agent/voice-agent";

export type CampaignAttempt = { campaignId: number; contactId: number; attempt: number };

export type SessionRecord = {
  /** Set by the first media connection: the run the session belongs to (null: never connected). */
  runId: number | null;
  orgId: number;
  provider: SessionProvider | null;
  /** The prepared agent (tests, the demo), else the deployment's. */
  agent: AgentName | null;
  greeting: string;
  greetingRecording: string | null;
  answeredBy: string | null;
  voicemail: VoicemailAction;
  /** edgedial dialed out: the agent judges who answered (a person, a machine, a menu). */
  outbound: boolean;
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
  outbound: false,
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

type Codec = { read(v: string): unknown; write(v: unknown): string };
const text: Codec = { read: (v) => v, write: (v) => String(v) };
const num: Codec = { read: (v) => Number(v), write: (v) => String(v) };
const flag: Codec = { read: (v) => v === "1", write: (v) => (v ? "1" : "0") };
const json: Codec = { read: (v) => JSON.parse(v), write: (v) => JSON.stringify(v) };

/** Each field's kv key (the names the first version of the session stored them under, where it had them) and codec. */
const FIELDS: Record<keyof SessionRecord, readonly [key: string, codec: Codec]> = {
  runId: ["run_id", num],
  orgId: ["org_id", num],
  provider: ["provider", text],
  agent: ["agent", text],
  greeting: ["greeting", text],
  greetingRecording: ["greeting_recording", text],
  answeredBy: ["answered_by", text],
  voicemail: ["voicemail", text],
  outbound: ["outbound", flag],
  campaign: ["campaign", json],
  variables: ["variables", json],
  record: ["record", flag],
  silenceMs: ["silence_ms", num],
  maxMs: ["max_ms", num],
  streamId: ["stream_id", text],
  startedWall: ["started_wall", num],
  clockMs: ["clock_ms", num],
  clockWall: ["clock_wall", num],
  lostSince: ["lost_since", num],
  resumes: ["resumes", num],
  agentState: ["agent_state", json],
  ended: ["ended", flag],
  endReason: ["end_reason", text],
  endNote: ["end_note", text],
  rate: ["rate", num],
  recUpload: ["rec_upload", text],
  recParts: ["rec_parts", json],
};

const FIELD_OF = new Map(Object.entries(FIELDS).map(([field, [key]]) => [key, field as keyof SessionRecord]));

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
      if (field) r[field] = FIELDS[field][1].read(v);
    }
    this.record = r as SessionRecord;
  }

  get current(): Readonly<SessionRecord> {
    return this.record;
  }

  /**
   * Writes the given fields: undefined leaves a field as it is, null deletes its row (it reads as its default again).
   * A plain value equal to the current one is not written again (the heartbeat sets the same fields every second).
   */
  set(patch: Partial<SessionRecord>): void {
    for (const [field, value] of Object.entries(patch) as [keyof SessionRecord, unknown][]) {
      if (value === undefined || (value === this.record[field] && (value === null || typeof value !== "object"))) continue;
      const [key, codec] = FIELDS[field];
      if (value === null) this.db.run`DELETE FROM kv WHERE k = ${key}`;
      else this.db.putKv(key, codec.write(value));
      (this.record as Record<string, unknown>)[field] = value ?? DEFAULTS[field];
    }
  }
}
