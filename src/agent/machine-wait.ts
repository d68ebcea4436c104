// Waiting out an answering machine on the audio clock until its mailbox records: the beep's end starts the message at
// once (a tone detector on the machine's audio, src/lib/audio/tones.ts); a machine that never beeps gets it after its
// greeting and `afterToneMs` of quiet; one still talking after `maxMachineMs` is hung up on. Pure.
import { isBeep, type Tone, ToneTracker } from "../lib/audio/tones";
import type { TurnSettings } from "./turn-settings";

export class MachineWait {
  private lastSoundMs: number;
  private readonly tones: ToneTracker;
  messageQueued = false;
  /** The beep the message followed, when there was one. */
  beep: Tone | null = null;

  constructor(
    readonly sinceMs: number,
    private readonly s: Pick<TurnSettings, "afterToneMs" | "maxMachineMs">,
    rate = 8000,
  ) {
    this.lastSoundMs = sinceMs;
    this.tones = new ToneTracker(rate);
  }

  /** One frame: "hang_up" (too long), "leave" (the message goes now, once), or wait (null). */
  push(atMs: number, voiced: boolean, samples?: Int16Array): "hang_up" | "leave" | null {
    if (this.messageQueued) return null;
    const beep = samples ? this.tones.push(samples, atMs).find(isBeep) : undefined;
    if (beep) return this.leave(beep);
    if (voiced || this.tones.current) this.lastSoundMs = atMs;
    if (atMs - this.sinceMs >= this.s.maxMachineMs) return "hang_up";
    if (atMs - this.lastSoundMs < this.s.afterToneMs) return null;
    return this.leave(null);
  }

  /** The beep that decided the machine already ended: the message goes at once. */
  beeped(tone: Tone): void {
    this.beep = tone;
    this.lastSoundMs = Number.NEGATIVE_INFINITY;
  }

  private leave(beep: Tone | null): "leave" {
    this.beep ??= beep;
    this.messageQueued = true;
    return "leave";
  }
}
