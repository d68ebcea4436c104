// bench/voice --e2e: what the caller hears, from the agent's frames as they arrive. The carrier plays at 1x: a frame
// plays from max(its arrival, the end of the frame before it) for 20 ms, so audio sent ahead waits its turn and
// audio that arrives late leaves a gap. Plain arithmetic (no I/O), unit tested.

export const FRAME_MS = 20;

/** One reply as the caller heard it: its first audio's play time, the longest silence inside it and where it began (ms of the reply heard before it). */
export type Heard = { firstAudioAt: number | null; longestGapMs: number; longestGapAfterMs: number | null; frames: number };

/** The carrier's playback of one call's incoming frames; `voiced` says whether a frame carries the agent's voice. */
export class Playback {
  private playEnd = 0;
  private firstAudioAt: number | null = null;
  /** When the last voiced frame stopped playing (gaps are measured between voiced frames only). */
  private lastVoicedEnd: number | null = null;
  private longestGap = 0;
  private longestGapAfter: number | null = null;
  private frames = 0;

  /** A frame arrived at `at` (ms on the caller's clock); returns when it plays. */
  frame(at: number, voiced: boolean): number {
    const start = Math.max(at, this.playEnd);
    this.playEnd = start + FRAME_MS;
    if (!voiced) return start;
    this.frames++;
    if (this.firstAudioAt === null) this.firstAudioAt = start;
    if (this.lastVoicedEnd !== null && start - this.lastVoicedEnd > this.longestGap) {
      this.longestGap = start - this.lastVoicedEnd;
      this.longestGapAfter = this.lastVoicedEnd - this.firstAudioAt!;
    }
    this.lastVoicedEnd = this.playEnd;
    return start;
  }

  /** When what has arrived so far will have played. */
  get playingUntil(): number {
    return this.playEnd;
  }

  /** The reply heard since the last call, and a fresh start for the next one (the playback clock goes on). */
  take(): Heard {
    const h = { firstAudioAt: this.firstAudioAt, longestGapMs: this.longestGap, longestGapAfterMs: this.longestGapAfter, frames: this.frames };
    [this.firstAudioAt, this.lastVoicedEnd, this.longestGap, this.longestGapAfter, this.frames] = [null, null, 0, null, 0];
    return h;
  }
}

/** The p-th percentile (nearest rank) of `xs`; NaN for none. */
export function percentile(xs: readonly number[], p: number): number {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
