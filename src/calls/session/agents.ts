// The two agents the media plane ships with. The greeting agent is the service's behaviour before the conversation
// engine: play the greeting (a clip; text-to-speech arrives with the voice agent), then hang up once the callee has
// heard it; a callee who talks over it stops it at once (barge-in), and the call ends when they fall silent. With
// nothing to play it hangs up at once. The echo agent repeats what the callee says, frame for frame (tests and the
// demo use it to show audio flowing both ways). The keypad agent answers keys with keys (tests and the demo of DTMF).
import type { SampleRate } from "../../lib/audio/resample";
import type { AgentContext, AgentControls, AudioFrame, VoiceAgent } from "../../agent/voice-agent";

export type AgentName = "greeting" | "echo" | "conversation" | "keypad" | "transfer";
export const AGENT_NAMES: readonly AgentName[] = ["greeting", "echo", "conversation", "keypad", "transfer"];

/**
 * The agent answered calls get on the media path (the VOICE_AGENT setting), or null: the carrier then speaks the
 * greeting itself, as it does until the conversation agent exists (the greeting agent has no speech of its own).
 */
export function liveAgent(env: { VOICE_AGENT?: string }): AgentName | null {
  const name = env.VOICE_AGENT?.trim();
  return name && (AGENT_NAMES as readonly string[]).includes(name) ? (name as AgentName) : null;
}

export const GREETING_MARK = "greeting-end";
/** After a barge-in, the callee's silence that ends the greeting call. */
const QUIET_AFTER_BARGE_IN_MS = 800;

export class GreetingAgent implements VoiceAgent {
  private controls: AgentControls | null = null;
  private speaking = false;
  private interruptedAt: number | null = null;
  private lastVoiceMs = 0;
  private started = 0;
  private text = "";

  constructor(private readonly clip: { samples: Int16Array; rate: SampleRate } | null) {}

  onStart(ctx: AgentContext, controls: AgentControls) {
    this.controls = controls;
    if (!this.clip) {
      controls.hangup("agent_hangup");
      return;
    }
    this.started = controls.now();
    this.text = ctx.greeting ?? "";
    this.speaking = true;
    controls.say(this.clip.samples, this.clip.rate);
    controls.mark(GREETING_MARK);
  }

  onAudio(frame: AudioFrame) {
    const c = this.controls;
    if (!c) return;
    if (frame.voiced) {
      this.lastVoiceMs = frame.atMs;
      if (this.speaking) {
        // Barge-in: stop talking now; the greeting goes to the transcript as interrupted.
        this.speaking = false;
        this.interruptedAt = frame.atMs;
        c.clear();
        c.log({ role: "agent", text: this.text, startMs: this.started, endMs: frame.atMs, interrupted: true });
      }
    } else if (this.interruptedAt !== null && frame.atMs - Math.max(this.lastVoiceMs, this.interruptedAt) >= QUIET_AFTER_BARGE_IN_MS) {
      c.hangup("agent_hangup");
    }
  }

  onMark(name: string) {
    if (name !== GREETING_MARK || !this.speaking || !this.controls) return;
    this.speaking = false;
    this.controls.log({ role: "agent", text: this.text, startMs: this.started, endMs: this.controls.now() });
    this.controls.hangup("agent_hangup");
  }

  onEnd() {}
}

export class EchoAgent implements VoiceAgent {
  private controls: AgentControls | null = null;

  onStart(_ctx: AgentContext, controls: AgentControls) {
    this.controls = controls;
  }

  /** Speech only: a quiet line is not echoed, so the callee's silence is still silence (and can time out). */
  onAudio(frame: AudioFrame) {
    if (frame.voiced) this.controls?.say(frame.samples, frame.rate);
  }

  onMark() {}
  onEnd() {}
}

/**
 * Hears the callee's keys and presses them back: each key goes to the transcript as the callee's turn (`key 5`), and
 * on `#` the keys heard since the last `#` are pressed back, `#` included (the session's sendDtmf: the carrier's
 * command where it has one, else tones). With the run's variable `keypad_press`, it first presses those keys itself
 * as the call starts (an agent getting through a phone menu, for tests against a real PBX).
 */
export class KeypadAgent implements VoiceAgent {
  private controls: AgentControls | null = null;
  private heard = "";

  onStart(ctx: AgentContext, controls: AgentControls) {
    this.controls = controls;
    const keys = ctx.variables.keypad_press;
    if (keys) void this.press(keys);
  }

  private async press(keys: string) {
    const c = this.controls!;
    try {
      await c.sendDtmf(keys);
      c.log({ role: "agent", text: `pressed ${keys}`, startMs: c.now(), endMs: c.now() });
    } catch (err) {
      c.log({ role: "agent", text: `could not press ${keys}: ${(err as Error)?.message ?? err}`, startMs: c.now(), endMs: c.now() });
    }
  }

  onAudio() {}

  async onDtmf(digit: string, atMs: number) {
    const c = this.controls;
    if (!c) return;
    c.log({ role: "callee", text: `key ${digit}`, startMs: atMs, endMs: atMs });
    this.heard += digit;
    if (digit !== "#") return;
    const keys = this.heard;
    this.heard = "";
    await c.sendDtmf(keys);
    c.log({ role: "agent", text: `pressed ${keys}`, startMs: c.now(), endMs: c.now() });
  }

  onMark() {}
  onEnd() {}
}
