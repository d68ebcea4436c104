// How the conversation agent ends a call, and why: a goodbye said and heard before the hang-up, the dead-air limit's
// last resort when nothing comes (not even the goodbye), and the reason and notes the session records. The agent
// (conversation-agent.ts) decides that a call should end; this keeps the call from ending twice or in silence.
import { log } from "../lib/log";
import type { Conversation } from "./graph";
import { deadAirNote, type IdlePolicy } from "./idle-policy";
import type { Speaker } from "./speaker";
import type { TurnSettings } from "./turn-settings";
import type { AgentControls, EndReason } from "./voice-agent";

export type EndingHost = {
  controls(): AgentControls | null;
  conversation: Conversation;
  voice: Speaker;
  idle: IdlePolicy;
  settings: TurnSettings;
  /** Stops hearing the callee (the utterance's live transcription). */
  stopListening(): void;
};

export class AgentEnding {
  /** The call is over for the agent: it says and hears nothing more. */
  ended = false;
  /** Why the agent ends the call when it hangs up. */
  reason: EndReason = "agent_hangup";
  /** The run's note (the outcome's): why a failure, a timeout or a machine ended the call. */
  note: string | null = null;
  /** Why the agent ended the call, for the session's end note. */
  endNote: string | null = null;

  constructor(private readonly host: EndingHost) {}

  hangup(reason: EndReason = this.reason, note = this.endNote) {
    if (this.ended) return;
    this.ended = true;
    this.host.stopListening();
    this.host.controls()?.hangup(reason, note);
  }

  /** Says a last sentence and hangs up once it is heard (for `why`); hangs up when even that cannot be said in time. */
  async goodbye(text: string, why: EndReason) {
    const { conversation, idle, voice } = this.host;
    log("info", "voice_agent_goodbye", { why, node: conversation.nodeId });
    this.reason = why;
    idle.dueSince = this.host.controls()!.wallNow();
    try {
      conversation.said(text);
      await voice.speak([text], { complete: true, last: true });
      idle.dueSince = null;
    } catch (err) {
      log("error", "voice_agent_goodbye_failed", { error: String((err as Error)?.message ?? err) });
      this.hangup();
    }
  }

  /**
   * Nothing came within the dead-air limit (`waiting`: a reply was being prepared, now given up): an apology and a
   * goodbye, or, when that goodbye (or a failure's) did not come either, the hang-up.
   */
  gaveUp(wall: number, waiting: boolean) {
    const { settings } = this.host;
    if (!waiting || this.note) {
      // Not even the goodbye came: the line stays dead no longer (a provider failure keeps its own reason).
      const dead = this.reason === "agent_hangup";
      this.hangup(dead ? "dead_air" : this.reason, dead ? deadAirNote(settings) : this.endNote);
      return;
    }
    log("error", "voice_agent_timeout", { waited_ms: settings.maxWaitMs, node: this.host.conversation.nodeId, at: wall });
    this.note = `No reply within ${settings.maxWaitMs / 1000} s of the callee's turn; the agent ended the call`;
    void this.goodbye(settings.errorText, "dead_air");
  }

  /** The call was handed to a person: the agent says and hears nothing more; the session ends the call as transferred. */
  transferred() {
    [this.ended, this.reason] = [true, "transferred"];
    this.host.stopListening();
  }
}
