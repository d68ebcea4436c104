// Paces the agent's audio to the callee in real time. Carriers play what they are sent as it arrives; sending a
// whole reply at once would leave it in the carrier's buffer, out of reach when the callee interrupts. The pacer
// keeps a bounded lead over the play clock (the session asks 400 ms where the carrier can clear its buffer, so a
// pause of the runtime is never heard; a few frames where it cannot) and holds the rest, so `clear` (ours, and the
// carrier's) stops the callee hearing the agent at once, and a mark is known to be played when the clock passes it. Pure: time comes in as an argument, so the session can drive it from the inbound audio or an alarm.

import { FRAME_MS } from "./framer";

/** A frame to send, with when it plays; or a mark. */
export type Paced = { kind: "frame"; frame: Uint8Array; at: number } | { kind: "mark"; name: string };
type Queued = { kind: "frame"; frame: Uint8Array } | { kind: "mark"; name: string };

export class Pacer {
  private queue: Queued[] = [];
  private head = 0;
  /** When the frame being sent next starts playing; null while nothing plays. */
  private playAt: number | null = null;
  /** Marks sent, with when they play (the end of the frame before them). */
  private sentMarks: Array<{ name: string; at: number }> = [];
  /** A reply is going out: its last item sent was a frame, not yet its closing mark. */
  private midReply = false;
  /** Times the callee heard a reply stop short: its play clock ran out mid-reply, before its next frame was ready. */
  underruns = 0;

  constructor(
    private readonly leadFrames = 3,
    private readonly frameMs = FRAME_MS,
  ) {}

  enqueue(frame: Uint8Array): void {
    this.queue.push({ kind: "frame", frame });
  }

  mark(name: string): void {
    this.queue.push({ kind: "mark", name });
  }

  /** Frames and marks waiting to be sent. */
  get pending(): number {
    return this.queue.length - this.head;
  }

  /** Whether audio is still queued or playing at `now`. */
  busy(now: number): boolean {
    return this.pending > 0 || (this.playAt !== null && this.playAt > now);
  }

  /** What to send at `now`: every frame due within the lead, and the marks between them. */
  due(now: number): Paced[] {
    const out: Paced[] = [];
    if (this.playAt !== null && this.playAt < now) this.playAt = null; // played out: the clock restarts at the next frame
    while (this.head < this.queue.length) {
      const item = this.queue[this.head];
      if (item.kind === "frame") {
        const at = this.playAt ?? now;
        if (at - now >= this.leadFrames * this.frameMs) break;
        if (this.playAt === null && this.midReply) this.underruns++;
        this.midReply = true;
        this.playAt = at + this.frameMs;
        out.push({ kind: "frame", frame: item.frame, at });
      } else {
        this.sentMarks.push({ name: item.name, at: this.playAt ?? now });
        this.midReply = false;
        out.push(item);
      }
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return out;
  }

  /** Marks whose audio has played by `now` (for carriers that do not echo marks back), oldest first. */
  played(now: number): string[] {
    let n = 0;
    while (n < this.sentMarks.length && this.sentMarks[n].at <= now) n++;
    return n ? this.sentMarks.splice(0, n).map((m) => m.name) : [];
  }

  /**
   * Barge-in: drops everything not yet sent and forgets the play clock. Returns the marks that will now never
   * play (queued ones and sent ones still ahead of the clock), so the agent learns what the callee did not hear.
   */
  clear(now: number): string[] {
    const dropped = this.sentMarks.filter((m) => m.at > now).map((m) => m.name);
    this.sentMarks = this.sentMarks.filter((m) => m.at <= now);
    for (let i = this.head; i < this.queue.length; i++) {
      const item = this.queue[i];
      if (item.kind === "mark") dropped.push(item.name);
    }
    this.queue = [];
    this.head = 0;
    this.playAt = null;
    this.midReply = false;
    return dropped;
  }
}
