// The seam between a call session (the media plane) and whatever talks on the call. The session owns the socket,
// codecs, pacing, clock and ending the call; an agent only hears 20 ms frames of linear audio and answers through
// the controls it is given. Agents never see carrier messages or wire formats.
import type { SampleRate } from "../../lib/audio/resample";

/** 20 ms of the callee's audio as 16-bit linear samples, and whether it is loud enough to be speech. */
export type AudioFrame = { samples: Int16Array; rate: SampleRate; atMs: number; voiced: boolean };

export type EndReason = "agent_hangup" | "callee_hangup" | "callee_silent" | "max_call_seconds" | "media_error" | "transferred" | "voicemail";

/** What to do when an answering machine picks up: end the call, or leave the greeting as a message after the tone. */
export type VoicemailAction = "hang_up" | "leave_message";

export type Turn = { role: "agent" | "callee"; text: string; startMs: number; endMs: number; interrupted?: boolean };

export type AgentContext = {
  runId: number;
  /** The run's template variables (initial context). */
  variables: Record<string, string>;
  /** The greeting the agent opens with (already rendered: the contact's override, else the Start node's), or null. */
  greeting: string | null;
  /** The contact's audio greeting, played instead of speaking `greeting` (which then names it in the transcript). */
  greetingAudio?: { samples: Int16Array; rate: SampleRate } | null;
  /** The rate the agent's audio is heard at (the carrier's). */
  rate: SampleRate;
  /** The carrier's answering-machine verdict when the stream started (`human`, `machine_start`, ...), or null. */
  answeredBy?: string | null;
  voicemail?: VoicemailAction;
};

/** What an agent may do on the call. */
export interface AgentControls {
  /** Queues speech (16-bit linear at `rate`); it is paced out to the callee in real time. */
  say(samples: Int16Array, rate: SampleRate): void;
  /** Stops the agent's speech within one frame (barge-in); returns the marks that will never play. */
  clear(): string[];
  /** Places a mark after the speech queued so far; `onMark` is called once the callee has heard up to it. */
  mark(name: string): void;
  /** Hands the call to another number where the carrier supports it; false where it does not. */
  transfer(number: string): Promise<boolean>;
  /** Ends the call through the carrier. */
  hangup(reason?: EndReason): void;
  /** An answering machine took the call: recorded on the run at once, so its final status reads voicemail. */
  machine(): void;
  /** Adds a turn to the run's transcript. */
  log(turn: Turn): void;
  /** Milliseconds since the stream started (the call's audio clock). */
  now(): number;
}

/** What an agent leaves on the run once the call ended. */
export type AgentOutcome = {
  gathered: Record<string, unknown>;
  disposition: string | null;
  usage: { sttSeconds: number; ttsSeconds: number; inputTokens: number; outputTokens: number };
  /** Why the call ended other than by the conversation (a provider failure, a voicemail), for the run's notes. */
  note?: string | null;
};

export interface VoiceAgent {
  onStart(context: AgentContext, controls: AgentControls): void | Promise<void>;
  onAudio(frame: AudioFrame): void | Promise<void>;
  onMark(name: string): void | Promise<void>;
  onEnd(reason: EndReason): void | Promise<void>;
  /** The carrier's answering-machine verdict, when it arrives after the media started (asynchronous detection). */
  onMachine?(answeredBy: string): void | Promise<void>;
  /** The agent's results (absent for agents that gather nothing). */
  outcome?(): AgentOutcome;
}
