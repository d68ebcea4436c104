// The audio greetings store: an organization uploads a WAV, which is checked, normalized to mono 16-bit PCM at its
// own rate (8, 16 or 24 kHz, the rates the call path carries) and kept in R2; D1 holds what the API lists. A
// campaign contact's `greeting_override_recording_id` names one, and a call on the media path plays it.
import { and, eq } from "drizzle-orm";
import { greetingRecordings } from "../db/schema";
import { MAX_GREETING_BODY_BYTES } from "../lib/body-limit";
import type { Db } from "../lib/db";
import { newestFirst } from "../lib/pagination";
import { readWav } from "../lib/audio/wav";
import type { SampleRate } from "../lib/audio/resample";

/** A two-minute 24 kHz mono greeting is 5.8 MB; the body cap leaves room for stereo uploads of shorter ones. */
export const MAX_GREETING_BYTES = MAX_GREETING_BODY_BYTES;
export const MAX_GREETING_SECONDS = 120;
const RATES: readonly number[] = [8000, 16000, 24000];

export type GreetingRow = typeof greetingRecordings.$inferSelect;
export type GreetingAudio = { samples: Int16Array; rate: SampleRate };

/** Why an upload is not a greeting we can play, or the greeting as mono samples. */
export function parseGreeting(bytes: Uint8Array): { ok: true; audio: GreetingAudio } | { ok: false; msg: string } {
  let pcm: ReturnType<typeof readWav>;
  try {
    pcm = readWav(bytes);
  } catch (err) {
    return { ok: false, msg: `Not a playable WAV file (${(err as Error).message}); send 16-bit PCM WAV` };
  }
  if (!RATES.includes(pcm.rate)) {
    return { ok: false, msg: `Sample rate ${pcm.rate} Hz is not supported: use 8000, 16000 or 24000 Hz (e.g. sox in.wav -r 16000 -c 1 -b 16 out.wav)` };
  }
  if (pcm.channels < 1 || pcm.channels > 2) return { ok: false, msg: `${pcm.channels} channels: send mono or stereo` };
  const frames = Math.floor(pcm.samples.length / pcm.channels);
  if (frames === 0) return { ok: false, msg: "The WAV file holds no audio" };
  if (frames / pcm.rate > MAX_GREETING_SECONDS) return { ok: false, msg: `The greeting is longer than ${MAX_GREETING_SECONDS} seconds` };
  let samples = pcm.samples.subarray(0, frames * pcm.channels);
  if (pcm.channels === 2) {
    // Stereo to mono: the mean of the two channels (no clipping, as both are 16-bit).
    const mono = new Int16Array(frames);
    for (let i = 0; i < frames; i++) mono[i] = (samples[2 * i] + samples[2 * i + 1]) >> 1;
    samples = mono;
  }
  return { ok: true, audio: { samples: Int16Array.from(samples), rate: pcm.rate as SampleRate } };
}

export const greetingKey = (orgId: number, recordingId: string) => `greetings/${orgId}/${recordingId}.wav`;

export function newRecordingId(): string {
  return `rec_${[...crypto.getRandomValues(new Uint8Array(12))].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export function getGreeting(db: Db, orgId: number, recordingId: string): Promise<GreetingRow | undefined> {
  return db
    .select()
    .from(greetingRecordings)
    .where(and(eq(greetingRecordings.orgId, orgId), eq(greetingRecordings.recordingId, recordingId)))
    .get();
}

export function listGreetings(db: Db, orgId: number, before: number | null, limit: number): Promise<GreetingRow[]> {
  return newestFirst(db.select().from(greetingRecordings).$dynamic(), greetingRecordings.id, before, limit, eq(greetingRecordings.orgId, orgId)).all();
}

/** The ids of the organization's audio greetings (a campaign's contacts are checked against them at once). */
export async function greetingIds(db: Db, orgId: number): Promise<Set<string>> {
  const rows = await db.select({ id: greetingRecordings.recordingId }).from(greetingRecordings).where(eq(greetingRecordings.orgId, orgId)).all();
  return new Set(rows.map((r) => r.id));
}

/** A stored greeting's audio, to play; null when it is gone. */
export async function loadGreeting(bucket: R2Bucket, key: string): Promise<GreetingAudio | null> {
  const obj = await bucket.get(key);
  if (!obj) return null;
  const parsed = parseGreeting(new Uint8Array(await obj.arrayBuffer()));
  return parsed.ok ? parsed.audio : null;
}

export function greetingView(row: GreetingRow) {
  return {
    recording_id: row.recordingId,
    name: row.name,
    sample_rate: row.sampleRate,
    duration_ms: row.durationMs,
    size_bytes: row.sizeBytes,
    created_at: row.createdAt,
  };
}
