// What the agent does when nothing happens, on the wall clock: a slow reply gets a short filler once per turn, a reply
// (or a goodbye) that does not come within the dead-air limit ends the call, and a silent callee is re-prompted, then
// told goodbye. Pure: the agent reports what happens and asks `tick` what to do now.
import type { TurnSettings } from "./turn-settings";

export type IdleAction = "dead_air" | "filler" | "reprompt" | "goodbye" | null;

/** A tool that runs this long gets a filler (the caller never waits in silence), and again every TOOL_FILLER_EVERY_MS. */
export const TOOL_FILLER_MS = 1000;
export const TOOL_FILLER_EVERY_MS = 5000;
/** A reply late because an engine failed over gets its filler this long after the callee's turn (if not sooner). */
export const FAILOVER_FILLER_MS = 1000;

export class IdlePolicy {
  /** When the line was last busy (the callee's voice, the agent's finished turn). */
  lastActivity = 0;
  /** When the callee's last turn ended while the agent has not answered it yet (the filler's clock). */
  waitingSince: number | null = null;
  /** Since when the callee has waited for audio that must come (a reply, a goodbye): the dead-air clock. */
  dueSince: number | null = null;
  reprompts = 0;
  /** While an action runs: when its next filler is due. */
  toolFillerAt: number | null = null;
  /** An engine failed over while the reply is awaited: the filler comes after FAILOVER_FILLER_MS at most. */
  private hurried = false;

  constructor(private readonly s: TurnSettings) {}

  /** A turn of the callee's ended: a reply is due from now. */
  awaitReply(now: number): void {
    this.waitingSince = now;
    this.dueSince = now;
    this.hurried = false;
  }

  /** An engine failed and the request moved on (failover.ts): the reply will be late, so the filler comes sooner. */
  failingOver(): void {
    if (this.waitingSince !== null) this.hurried = true;
  }

  /** An action (a tool's request) began: the dead-air clock waits for it (it has its own timeout); a filler is due soon. */
  actionStarted(now: number): void {
    this.dueSince = null;
    this.toolFillerAt = now + TOOL_FILLER_MS;
  }

  /** The action is done: the model is asked again, and a reply is due from now. */
  actionDone(now: number): void {
    this.toolFillerAt = null;
    this.dueSince = now;
  }

  /** `playing`: the agent's queued speech has not all been heard yet (a filler waits for it). */
  tick(now: number, state: { speaking: boolean; thinking: boolean; playing?: boolean }): IdleAction {
    if (this.dueSince !== null && now - this.dueSince >= this.s.maxWaitMs) {
      this.dueSince = null;
      return "dead_air";
    }
    if (this.toolFillerAt !== null) {
      if (now < this.toolFillerAt || state.playing) return null;
      this.toolFillerAt = now + TOOL_FILLER_EVERY_MS;
      return "filler";
    }
    if (state.thinking && !state.speaking && this.waitingSince !== null && this.s.fillerAfterMs > 0) {
      if (now - this.waitingSince < (this.hurried ? Math.min(this.s.fillerAfterMs, FAILOVER_FILLER_MS) : this.s.fillerAfterMs)) return null;
      this.waitingSince = null;
      return "filler";
    }
    if (state.speaking || state.thinking || now - this.lastActivity < this.s.repromptAfterMs) return null;
    this.lastActivity = now;
    return this.reprompts++ < this.s.maxReprompts ? "reprompt" : "goodbye";
  }
}

/** The silent callee's end, in words: how long the agent waited, and that it asked before it said goodbye. */
export const silentNote = (s: TurnSettings) =>
  `The callee said nothing for ${(s.repromptAfterMs * (s.maxReprompts + 1)) / 1000} s after the agent last spoke (asked ${s.maxReprompts} time${s.maxReprompts === 1 ? "" : "s"} whether they were still there); the agent said goodbye and ended the call`;

/** Nothing at all could be said (not even the apology) within the dead-air limit. */
export const deadAirNote = (s: TurnSettings) => `Nothing could be said within ${s.maxWaitMs / 1000} s (not even the apology); the agent hung up`;
