// Waiting out an answering machine on the audio clock: its greeting, then its tone, then quiet for `afterToneMs`
// means the message can start; a machine still talking after `maxMachineMs` is hung up on. Pure.
import type { TurnSettings } from "./turn-settings";

export class MachineWait {
  private lastSoundMs: number;
  messageQueued = false;

  constructor(
    readonly sinceMs: number,
    private readonly s: Pick<TurnSettings, "afterToneMs" | "maxMachineMs">,
  ) {
    this.lastSoundMs = sinceMs;
  }

  /** One frame: "hang_up" (too long), "leave" (the message goes now, once), or wait (null). */
  push(atMs: number, voiced: boolean): "hang_up" | "leave" | null {
    if (this.messageQueued) return null;
    if (voiced) this.lastSoundMs = atMs;
    if (atMs - this.sinceMs >= this.s.maxMachineMs) return "hang_up";
    if (atMs - this.lastSoundMs < this.s.afterToneMs) return null;
    this.messageQueued = true;
    return "leave";
  }
}
