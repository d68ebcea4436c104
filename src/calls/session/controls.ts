// What the agent may do on the call (the VoiceAgent seam's controls), bound to one media loop: its speech goes out
// only while that loop is the call's current one and the call has not begun to end, so an agent left behind by a
// reconnect or an ending call can no longer speak or hang up.
import type { AgentControls, EndReason, TransferOutcome, TransferRequest, Turn } from "../../agent/voice-agent";
import type { MediaLoop } from "./media-loop";

export type ControlsOf = {
  /** Whether this loop still carries the call. */
  current(): boolean;
  hangup(reason: EndReason, note: string | null): void;
  /** Presses keys: the carrier's command, else tones on this loop (the session's keypad). */
  sendDtmf(digits: string): Promise<void>;
  /** Hands the call to a person (the session's transfer desk). */
  transfer(request: TransferRequest): Promise<TransferOutcome>;
  machine(): void;
  log(turn: Turn): void;
  /** Keeps the agent's state with the call's clock at this moment. */
  save(state: unknown, clockMs: number): void;
};

export function agentControls(loop: MediaLoop, of: ControlsOf): AgentControls {
  return {
    say: (samples, rate) => {
      if (of.current()) loop.say(samples, rate);
    },
    mark: (name) => {
      if (of.current()) loop.mark(name);
    },
    clear: () => (of.current() ? loop.clear() : []),
    // A loop no longer carrying the call (a reconnect, the call ending) hands nothing over.
    transfer: async (request) => (of.current() ? of.transfer(request) : "failed"),
    // A loop no longer carrying the call presses nothing.
    sendDtmf: async (digits) => (of.current() ? of.sendDtmf(digits) : undefined),
    machine: () => of.machine(),
    hangup: (reason = "agent_hangup", note = null) => {
      if (of.current()) of.hangup(reason, note);
    },
    log: (t) => of.log(t),
    save: (state) => {
      // The clock with it: a call resumed from this point goes on from this time, not from the last heartbeat's.
      if (of.current()) of.save(state, loop.clockMs);
    },
    onSent: (sent) => loop.onSent(sent),
    now: () => loop.clockMs,
    wallNow: () => Date.now(),
  };
}
