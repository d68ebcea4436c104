// An answering machine on the call, once the carrier's detection or the callee's first words say so: the agent's
// speech stops, the call is marked voicemail at once, then it is hung up on, or the greeting is left as a message once
// the machine's greeting and tone are over (machine-wait.ts), as the campaign chose (`voicemail_action`).
import { log } from "../lib/log";
import { MachineWait } from "./machine-wait";
import type { Speaker } from "./speaker";
import type { Speech } from "./speech";
import type { TurnSettings } from "./turn-settings";
import type { AgentControls, AudioFrame, VoicemailAction } from "./voice-agent";

export type VoicemailMessage = { text: string; audio: Speech | null };

type Host = { controls: () => AgentControls; voice: Speaker; hangup: () => void };

export class AnsweringMachine {
  private wait: MachineWait | null = null; // waiting out its greeting and tone
  private message: VoicemailMessage | null = null;

  constructor(
    private readonly settings: Pick<TurnSettings, "afterToneMs" | "maxMachineMs">,
    private readonly host: Host,
  ) {}

  /** A machine took the call: from here on only its audio matters (no turns, no idle policy, no keys). */
  get answered(): boolean {
    return this.wait !== null;
  }

  /** A machine answered at `atMs`: what the run's note says, and whether a message will be left (else hang up now). */
  take(atMs: number, how: string, action: VoicemailAction, message: VoicemailMessage | null): { note: string; leaving: boolean } {
    const c = this.host.controls();
    if (this.host.voice.speaking) {
      c.clear();
      this.host.voice.forget(c.now());
    }
    c.machine();
    this.wait = new MachineWait(atMs, this.settings);
    const leaving = action === "leave_message" && !!message;
    this.message = leaving ? message : null;
    log("info", "voice_agent_machine", { how, action: leaving ? "leave_message" : "hang_up" });
    const note = `An answering machine answered (${how}); ${leaving ? "the greeting was left as a message" : "the call was hung up"}`;
    return { note, leaving };
  }

  /** One frame of the machine: too long hangs up; once its tone is over the message plays, then the call ends. */
  audio(frame: AudioFrame): void {
    const next = this.wait?.push(frame.atMs, frame.voiced);
    if (next === "hang_up" || (next === "leave" && !this.message)) {
      this.host.hangup();
      return;
    }
    if (next !== "leave" || !this.message) return;
    const { text, audio } = this.message;
    void this.host.voice.speak([text], { complete: true, last: true, audio }).catch((err) => {
      log("error", "voice_agent_message_failed", { error: String((err as Error)?.message ?? err) });
      this.host.hangup();
    });
  }
}
