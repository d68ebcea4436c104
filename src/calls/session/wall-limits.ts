// The call's limits on the wall clock, checked on every message and by the session's heartbeat: its length
// (`max_call_seconds`), the callee's silence (`callee_silent`; not while a person's phone rings for a warm transfer),
// and a lost media socket's grace (`media_lost`). Pure: the session brings the times and acts on the verdict.
import { HEARTBEAT_MS, MAX_CALL_SECONDS, RESUME_GRACE_MS, SILENCE_TIMEOUT_SECONDS } from "./call-length";

export type WallBounds = { silenceMs: number; maxMs: number };

/** The run's own bounds (its campaign's settings), else the deployment's. */
export function wallBounds(s: { silenceMs: number | null; maxMs: number | null }): WallBounds {
  return { silenceMs: s.silenceMs ?? SILENCE_TIMEOUT_SECONDS * 1000, maxMs: s.maxMs ?? MAX_CALL_SECONDS * 1000 };
}

/** The limit a live call has reached, if any: its length first, then the callee's silence. */
export function limitReached(b: WallBounds, startedWall: number | null, lastActivityWall: number, now: number, ringing: boolean) {
  if (now - (startedWall ?? now) >= b.maxMs) return "max_call_seconds" as const;
  if (now - lastActivityWall >= b.silenceMs && !ringing) return "callee_silent" as const;
  return null;
}

/** No media socket since `lostSince`: past the grace the call ends (`end`, the note's detail), else look again `at`. */
export function lostMedia(lostSince: number, now: number, maxAt: number): { end: string } | { at: number } {
  if (now - lostSince >= RESUME_GRACE_MS) return { end: `for ${Math.round((now - lostSince) / 1000)} s (the service restarted or the carrier dropped it)` };
  return { at: Math.min(lostSince + RESUME_GRACE_MS, maxAt) };
}

/** When the heartbeat looks next: a beat, the silence limit, or the call's end, whichever comes first. */
export function nextBeat(b: WallBounds, now: number, lastActivityWall: number, maxAt: number): number {
  return Math.min(now + HEARTBEAT_MS, lastActivityWall + b.silenceMs, maxAt);
}
