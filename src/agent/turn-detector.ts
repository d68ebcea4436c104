// Finds the callee's turns in 20 ms frames on the audio clock: an utterance starts with a voiced frame and ends once
// the line has been quiet for `endOfTurnMs`. Pure: frames in, the utterance's start and its end out; what listens
// (a live transcription) is the agent's business.

/** One utterance of the callee: its audio and its times on the call's audio clock. */
export type Utterance = { samples: Int16Array; startMs: number; endMs: number; voicedMs: number };

export type TurnEvent = { kind: "start" } | { kind: "end"; utterance: Utterance } | null;

export class TurnDetector {
  private parts: Int16Array[] = [];
  private startMs: number | null = null;
  /** The voice heard so far in the current utterance. */
  voicedMs = 0;
  /**
   * When the callee's voice was last heard: the end of their last voiced frame (frames come with the time they end,
   * the call's clock after them). The pause since decides the turn's end.
   */
  lastVoiceMs = 0;

  constructor(private readonly endOfTurnMs: number) {}

  /** Whether the callee is mid-utterance. */
  get active(): boolean {
    return this.startMs !== null;
  }

  /** Takes one frame: the start of an utterance, the end of the callee's turn, or nothing new. */
  push(samples: Int16Array, atMs: number, voiced: boolean): TurnEvent {
    if (voiced) {
      const starts = this.startMs === null;
      if (starts) this.startMs = atMs;
      this.voicedMs += 20;
      this.lastVoiceMs = atMs;
      this.parts.push(samples);
      return starts ? { kind: "start" } : null;
    }
    if (this.startMs === null) return null;
    this.parts.push(samples);
    if (atMs - this.lastVoiceMs < this.endOfTurnMs) return null;
    const utterance = { samples: concat(this.parts), startMs: this.startMs, endMs: atMs - this.endOfTurnMs, voicedMs: this.voicedMs };
    this.parts = [];
    this.startMs = null;
    this.voicedMs = 0;
    return { kind: "end", utterance };
  }

  /** The current utterance's audio so far (for a turn-detection model). */
  audio(): Int16Array {
    return concat(this.parts);
  }

  /**
   * A turn-detecting model said the turn is over (`atMs`): the utterance ends now, without waiting for silence. It
   * ended where the silence bound would say it did, with the last voiced frame (not a frame later: the turn's timing
   * counts from there, and read 20 ms short on every model-ended turn beside the call's recording).
   */
  endNow(atMs: number): Utterance | null {
    if (this.startMs === null) return null;
    const utterance = { samples: concat(this.parts), startMs: this.startMs, endMs: Math.min(atMs, this.lastVoiceMs), voicedMs: this.voicedMs };
    this.parts = [];
    this.startMs = null;
    this.voicedMs = 0;
    return utterance;
  }

  /** The callee went on after a turn that was being answered: that turn's audio opens this utterance again. */
  carry(u: Utterance): boolean {
    if (this.startMs !== null) return false;
    this.startMs = u.startMs;
    this.voicedMs = u.voicedMs;
    this.parts = [u.samples];
    return true;
  }
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
