// Which gap in the recording belongs to which reply (issue 42, latency from what the caller heard): each agent turn
// with a timing is an answer to the caller's turn that ended at its origin (the caller's last word on the call's
// audio clock, which is the recording's: frame n of the recording is the clock's [20n, 20n + 20)). The origin is
// start_ms - first_audio_heard_ms (the reply starts to play as it starts to speak); the recording's exchange whose
// caller end lies nearest it, within MATCH_MS, is that reply's, and its gap the reply's `heard_gap_ms`.
import type { StoredTurn } from "../../db/schema";
import type { Exchange } from "../../lib/audio/voice-activity";

/**
 * How far the recording's end of the caller's voice may lie from the agent's own: the agent's energy gate is louder
 * (rms 500) than the recording's bar (-50 dBFS), so a word's soft end counts in the recording and not to the agent.
 */
export const MATCH_MS = 750;

/** The transcript with `heard_gap_ms` on each reply the recording shows an answer for, and how many it matched. */
export function withHeardGaps(transcript: readonly StoredTurn[], found: readonly Exchange[]): { transcript: StoredTurn[]; matched: number } {
  const used = new Set<number>();
  let matched = 0;
  const out = transcript.map((t) => {
    const timing = t.timing;
    const heard = timing?.first_audio_heard_ms;
    if (t.role !== "agent" || !timing || typeof heard !== "number" || typeof t.start_ms !== "number") return t;
    const origin = t.start_ms - heard;
    let best = -1;
    found.forEach((x, i) => {
      const off = Math.abs(x.callerEndMs - origin);
      if (used.has(i) || off > MATCH_MS || (t.end_ms != null && x.agentStartMs > t.end_ms)) return;
      if (best < 0 || off < Math.abs(found[best].callerEndMs - origin)) best = i;
    });
    // An overlap (the agent's voice began before the caller's ended) is not a gap: the reply keeps none.
    if (best < 0 || found[best].gapMs < 0) return t;
    used.add(best);
    matched++;
    return { ...t, timing: { ...timing, heard_gap_ms: Math.round(found[best].gapMs) } };
  });
  return { transcript: out, matched };
}
