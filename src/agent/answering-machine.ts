// An answering machine on the call: the carrier's detection, or edgedial's own (amd/classifier.ts: the callee's audio
// and first words, from the answer on) says who answered. On a machine the agent's speech stops, the call is marked
// voicemail at once, then it is hung up on, or the message is left once the mailbox records: at the end of its beep,
// else after its greeting and a quiet (machine-wait.ts), as the campaign chose (`voicemail_action`). A fax or modem is
// hung up on. An IVR menu or a call screening service is talked to: the agent's model is told which it is.
import { log } from "../lib/log";
import { type AmdDecision, AmdClassifier, type AmdRecord, isMachineClass } from "./amd/classifier";
import { MachineWait } from "./machine-wait";
import type { Speaker } from "./speaker";
import type { Speech } from "./speech";
import type { TurnSettings } from "./turn-settings";
import type { AgentContext, AgentControls, AudioFrame, VoicemailAction } from "./voice-agent";
import { isMachine } from "../lib/answered-by";
import { renderTemplate } from "../workflows/template";
import { soundsLikeMachine } from "./voicemail";

export type VoicemailMessage = { text: string; audio: Speech | null };

type Host = { controls: () => AgentControls; voice: Speaker; hangup: () => void };

/** What the model is told first about an answer that is not a person (it may press keys on a menu). */
const TOLD: Partial<Record<AmdDecision["cls"], string>> = {
  ivr_menu: "[An automated phone menu (IVR) answered; press keys to reach a person if the menu offers it.]",
  call_screening: "[A call screening service answered; say who you are and why you are calling.]",
};

export class AnsweringMachine {
  private wait: MachineWait | null = null; // waiting out its greeting and tone
  private message: VoicemailMessage | null = null;
  private amd: AmdClassifier | null = null;
  private startMs = 0;
  private rate = 8000;
  private variables: Record<string, string> = {};
  decision: AmdDecision | null = null;

  constructor(
    private readonly settings: Pick<TurnSettings, "afterToneMs" | "maxMachineMs" | "voicemailText">,
    private readonly host: Host,
  ) {}

  /** A machine took the call: from here on only its audio matters (no turns, no idle policy, no keys). */
  get answered(): boolean {
    return this.wait !== null;
  }

  /** The call was answered at `atMs`: an outbound call the carrier gave no verdict on is judged from here. */
  start(ctx: Pick<AgentContext, "outbound" | "answeredBy" | "rate" | "variables">, atMs: number): void {
    [this.variables, this.startMs, this.rate] = [ctx.variables, atMs, ctx.rate];
    if (ctx.outbound && ctx.answeredBy !== "human" && !isMachine(ctx.answeredBy)) this.amd = new AmdClassifier(atMs, ctx.rate);
  }

  /**
   * One frame of the callee while undecided (with the words heard so far, where the engine streams them): the decision
   * when it is a machine or a fax (the call is theirs then); a person, a menu or a screening service talk on.
   */
  judge(frame: AudioFrame, words?: string): AmdDecision | null {
    const a = this.amd;
    if (!a || a.decision) return null;
    const d = (words ? a.words(words, frame.atMs) : null) ?? a.frame(frame);
    if (d) this.decided(d);
    return d && (isMachineClass(d.cls) || d.cls === "fax_tone") ? d : null;
  }

  /**
   * The callee's first turn, transcribed: a machine's words (or a greeting past a person's length) make it a machine
   * even where the audio said a person; else the words as the model hears them (told first of an IVR or a screening service).
   */
  firstWords(text: string, atMs: number, voicedMs: number): { machine: string | null; heard: string } {
    const a = this.amd;
    const d = !a ? null : a.decision ? this.decision : (a.words(text, atMs) ?? a.person(atMs, "its first turn, without a machine's words"));
    if (d && d !== this.decision) this.decided(d);
    if (d && isMachineClass(d.cls)) return { machine: d.reason, heard: text };
    if (soundsLikeMachine(text, voicedMs)) return { machine: "its first words sounded like an answering machine", heard: text };
    const told = d && TOLD[d.cls];
    return { machine: null, heard: told ? `${told} ${text}` : text };
  }

  /** A machine answered at `atMs`: what the run's note says, and whether a message will be left (else hang up now). */
  take(atMs: number, how: string, action: VoicemailAction, message: VoicemailMessage | null): { note: string; leaving: boolean } {
    const c = this.host.controls();
    if (this.host.voice.speaking) {
      c.clear();
      this.host.voice.forget(c.now());
    }
    c.machine();
    this.wait = new MachineWait(atMs, this.settings, this.rate);
    // The beep that decided it has ended: the mailbox records now.
    const tone = this.decision?.reason.includes("beep") ? this.decision.evidence.tones.at(-1) : undefined;
    if (tone) this.wait.beeped({ ...tone, startMs: tone.startMs + this.startMs, endMs: tone.endMs + this.startMs, share: 1 });
    // The agent's own message where it has one (its variables filled), else the opening greeting.
    const own = this.settings.voicemailText ? { text: renderTemplate(this.settings.voicemailText, this.variables).text, audio: null } : null;
    const leaving = action === "leave_message" && !!(own ?? message) && this.decision?.cls !== "fax_tone";
    this.message = leaving ? (own ?? message) : null;
    log("info", "voice_agent_machine", { how, action: leaving ? "leave_message" : "hang_up", amd: this.decision?.cls ?? null });
    const d = this.decision;
    const judged = d && isMachineClass(d.cls) ? `; ${d.cls.replace("_", " ")}, decided ${(d.decideMs / 1000).toFixed(1)} s after the answer` : "";
    const what = d?.cls === "fax_tone" ? "A fax or modem answered" : "An answering machine answered";
    const left = own ? "the agent's voicemail message was left" : "the greeting was left as a message";
    const note = `${what} (${how}${judged}); ${leaving ? left : "the call was hung up"}`;
    return { note, leaving };
  }

  /** One frame of the machine: too long hangs up; once its beep (or its greeting) is over the message plays, then the call ends. */
  audio(frame: AudioFrame): void {
    const next = this.wait?.push(frame.atMs, frame.voiced, frame.samples);
    if (next === "hang_up" || (next === "leave" && !this.message)) {
      this.host.hangup();
      return;
    }
    if (next !== "leave" || !this.message) return;
    this.messageAtMs = frame.atMs;
    const { text, audio } = this.message;
    void this.host.voice.speak([text], { complete: true, last: true, audio }).catch((err) => {
      log("error", "voice_agent_message_failed", { error: String((err as Error)?.message ?? err) });
      this.host.hangup();
    });
  }

  private messageAtMs: number | null = null;

  /** The detection for the run's details: null where the carrier decided (or the call never got that far). */
  record(): AmdRecord | null {
    const d = this.decision;
    if (!d) return null;
    const beep = this.wait?.beep;
    const rel = (ms: number | null | undefined) => (ms == null ? null : Math.round(ms - this.startMs));
    return { ...d, ...(this.wait ? { beep_hz: beep?.freqHz ?? null, beep_end_ms: rel(beep?.endMs), message_ms: rel(this.messageAtMs) } : {}) };
  }

  private decided(d: AmdDecision) {
    this.decision = d;
    log("info", "voice_agent_amd", { cls: d.cls, decide_ms: d.decideMs, reason: d.reason });
  }
}
