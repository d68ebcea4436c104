// What the demo's data must say of itself, over every run of a campaign (pure: the runs, the progress and the logs as
// the API returns them). Each check returns the problems it found, in words, so a failing test names the run.

export type RunDetail = {
  name: string;
  status: string;
  answered_by: string | null;
  answered_at: string | null;
  ended_at: string | null;
  duration_seconds: number | null;
  transcript?: { role: string; text: string }[] | null;
  transfer?: unknown;
};

/** One run: a conversation is never voicemail; its end is not before its answer; its duration is its recording's (±1 s). */
export function runProblems(run: RunDetail, recordingSeconds: number | null): string[] {
  const out: string[] = [];
  const talked = (run.transcript ?? []).some((t) => t.role === "callee" || t.role === "user");
  if (talked && run.status === "voicemail") out.push(`${run.name}: voicemail, yet the callee talked with the agent`);
  if (run.answered_at && run.ended_at && Date.parse(run.answered_at) > Date.parse(run.ended_at))
    out.push(`${run.name}: answered_at ${run.answered_at} after ended_at ${run.ended_at}`);
  // A transferred call goes on with the person after the agent's recording ends: its duration is longer, rightly.
  if (!run.transfer && run.duration_seconds != null && recordingSeconds != null && Math.abs(run.duration_seconds - recordingSeconds) > 1)
    out.push(`${run.name}: duration ${run.duration_seconds} s, recording ${recordingSeconds.toFixed(1)} s`);
  return out;
}

export type Progress = {
  state: string;
  total: number;
  processed: number;
  completed: number;
  /** Answered with no conversation (issue 39); absent from servers before it. */
  answered_no_conversation?: number;
  failed: number;
  pending: number;
  in_progress: number;
  retry_waiting: number;
  total_rows: number;
  processed_rows: number;
  progress_percentage: number;
  completion_percentage: number;
  failed_calls: number;
};

/** The counters add up as the API defines them (contract §6). */
export function progressProblems(p: Progress, runs: number): string[] {
  const out: string[] = [];
  const parts = p.pending + p.completed + (p.answered_no_conversation ?? 0) + p.failed + p.in_progress + p.retry_waiting;
  if (parts !== p.total) out.push(`pending + completed + answered_no_conversation + failed + in_progress + retry_waiting = ${parts}, total ${p.total}`);
  if (p.processed !== p.total - p.pending) out.push(`processed ${p.processed} is not total ${p.total} - pending ${p.pending}`);
  if (p.total_rows !== p.total || p.processed_rows !== p.processed) out.push("total_rows/processed_rows differ from total/processed");
  const pct = p.total ? (p.processed / p.total) * 100 : 0;
  if (p.progress_percentage !== pct || p.completion_percentage !== pct) out.push(`progress ${p.progress_percentage}%, expected ${pct}%`);
  if (p.failed_calls > runs) out.push(`${p.failed_calls} failed calls of ${runs} calls`);
  if (p.state === "completed" && p.pending + p.in_progress + p.retry_waiting > 0) out.push("completed with contacts still pending, in progress or waiting");
  return out;
}

/** Log messages never number a row past the file's last line, nor say a bare "Row N". */
export function logProblems(logs: { message: string; details?: Record<string, unknown> | null }[], contacts: number): string[] {
  const out: string[] = [];
  for (const l of logs) {
    if (/\bRow \d+/.test(l.message)) out.push(`a bare row number: ${l.message}`);
    const row = l.details?.row;
    if (typeof row === "number" && (row < 2 || row > contacts + 1)) out.push(`row ${row} outside lines 2..${contacts + 1}: ${l.message}`);
  }
  return out;
}

/** A recording's length from its WAV header (16-bit PCM; the data chunk found, not assumed at byte 44). */
export function wavSeconds(wav: Uint8Array): number {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  const channels = view.getUint16(22, true);
  const rate = view.getUint32(24, true);
  for (let at = 12; at + 8 <= wav.length; at += 8 + view.getUint32(at + 4, true)) {
    const id = String.fromCharCode(...wav.subarray(at, at + 4));
    if (id === "data") return Math.min(view.getUint32(at + 4, true), wav.length - at - 8) / (rate * channels * 2);
  }
  throw new Error("no data chunk");
}
