// The seam between a call session (the media plane) and whatever talks on the call. The session owns the socket,
// codecs, pacing, clock and ending the call; an agent only hears 20 ms frames of linear audio and answers through
// the controls it is given. Agents never see carrier messages or wire formats.
import type { SampleRate } from "../lib/audio/resample";

/** 20 ms of the callee's audio as 16-bit linear samples, and whether it is loud enough to be speech. */
export type AudioFrame = { samples: Int16Array; rate: SampleRate; atMs: number; voiced: boolean };

/** Why a call session ended its call; each is distinct on the run (`end_reason`). */
export const END_REASONS = [
  "agent_hangup",
  "callee_hangup",
  "callee_silent",
  "dead_air",
  "max_call_seconds",
  "media_error",
  "media_lost",
  "provider_failure",
  "transferred",
  "voicemail",
] as const;
export type EndReason = (typeof END_REASONS)[number];

/** What to do when an answering machine picks up: end the call, or leave the greeting as a message after the tone. */
export type VoicemailAction = "hang_up" | "leave_message";

/** A turn of the transcript; `tool` turns say which action the agent took and how it went (never its secrets or answer). */
export type Turn = { role: "agent" | "callee" | "tool"; text: string; startMs: number; endMs: number; interrupted?: boolean; timing?: TurnTiming };

/**
 * How long an agent's reply took, stage by stage: ms after the caller's last word ended (their utterance's end on the
 * audio clock). A stage the reply never reached (cut off first) is absent. `cut_*`: what a barge-in kept from being heard.
 */
export type TurnTiming = {
  /** The end of their turn was detected (the silence bound, or a turn-detecting model). */
  end_of_turn_ms?: number;
  stt_final_ms?: number;
  model_first_token_ms?: number;
  first_sentence_ms?: number;
  voice_first_byte_ms?: number;
  /** The reply's first frame went to the carrier. */
  first_audio_sent_ms?: number;
  /** That frame plays to the caller (the audio clock's time for it: the pacer's lead ahead of the caller). */
  first_audio_heard_ms?: number;
  /** Audio queued but never heard (the barge-in cleared it), and its words. */
  cut_ms?: number;
  cut_words?: string;
  /** With fallback engines (docs/failover.md): the engine that served each part, and the failovers on the way. */
  llm_engine?: string;
  stt_engine?: string;
  tts_engine?: string;
  failovers?: string;
  failover_count?: number;
};

/** One action the agent took on the model's behalf (an HTTP tool, a transfer, key presses), for the run's `tool_calls`. */
export type ToolCallRecord = {
  name: string;
  arguments: Record<string, unknown>;
  status: "ok" | "error" | "timeout" | "refused";
  /** The HTTP tool's answer status, when one came. */
  http_status: number | null;
  duration_ms: number;
  /** What went wrong, in words (never a header's value). */
  error?: string;
  /** When it started, on the call's audio clock. */
  at_ms?: number;
};

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
  /** edgedial dialed out: who answered is judged on the callee's audio and words (src/agent/amd/classifier.ts). */
  outbound?: boolean;
  /** The call's media came back after the service restarted: the agent's state as it last saved it (see `save`). */
  resumed?: { state: unknown; gapMs: number } | null;
};

/** A hand-over of the call to a person: `cold` leaves at once, `warm` first tells them about the call. */
export type TransferRequest = {
  /** E.164, or for a PBX (ari) a dial string or SIP URI; it passed the organization's calling policy. */
  destination: string;
  mode: "cold" | "warm";
  /** Warm: what the person hears before the two are bridged (the agent writes it from the call so far). */
  summary?: string | null;
  /** Warm: the same summary in the agent's own voice, where the carrier can play audio to the person's leg. */
  summaryAudio?: { samples: Int16Array; rate: SampleRate } | null;
  /** How long the person's phone may ring before the agent takes the call back. */
  timeoutSeconds: number;
};

/**
 * How a transfer went. `connected`: the carrier took the call and edgedial has left it (the session then ends as
 * `transferred`); `no_answer`/`failed`: edgedial still holds the call and the agent goes on; `unsupported`: the
 * carrier offers no transfer at all.
 */
export type TransferOutcome = "connected" | "no_answer" | "failed" | "unsupported";

/** What an agent may do on the call. */
export interface AgentControls {
  /** Queues speech (16-bit linear at `rate`); it is paced out to the callee in real time. */
  say(samples: Int16Array, rate: SampleRate): void;
  /** Stops the agent's speech within one frame (barge-in); returns the marks that will never play. */
  clear(): string[];
  /** Places a mark after the speech queued so far; `onMark` is called once the callee has heard up to it. */
  mark(name: string): void;
  /** Hands the call to a person through the carrier; resolves once it is known how that went. */
  transfer(request: TransferRequest): Promise<TransferOutcome>;
  /** Presses keys on the call (0-9, *, #, A-D; `w` waits half a second): the carrier's command where it has one, else tones. */
  sendDtmf(digits: string): Promise<void>;
  /** Ends the call through the carrier; `note`: why, in words, for the run's notes (else the session's own). */
  hangup(reason?: EndReason, note?: string | null): void;
  /** An answering machine took the call: recorded on the run at once, so its final status reads voicemail. */
  machine(): void;
  /** Adds a turn to the run's transcript. */
  log(turn: Turn): void;
  /** Calls `sent` once the next frame of the agent's audio goes to the carrier, with when it plays on the audio clock. */
  onSent?(sent: (playsAtMs: number) => void): void;
  /** Milliseconds since the stream started (the call's audio clock: transcript times and pacing). */
  now(): number;
  /** Wall-clock milliseconds: what silence, re-prompt and dead-air limits count in (a burst of late frames is not silence). */
  wallNow(): number;
  /** Keeps the agent's state at a stable point, for the call to go on from should the service restart. */
  save(state: unknown): void;
}

/** What an agent leaves on the run once the call ended. */
export type AgentOutcome = {
  gathered: Record<string, unknown>;
  disposition: string | null;
  usage: { sttSeconds: number; ttsSeconds: number; inputTokens: number; outputTokens: number };
  /** Why the call ended other than by the conversation (a provider failure, a voicemail), for the run's notes. */
  note?: string | null;
  /** Who answered, as edgedial judged it (answering-machine detection): class, evidence, time to decide. */
  amd?: import("./amd/classifier").AmdRecord | null;
  /** The actions the agent took, in order (empty or absent: none). */
  toolCalls?: ToolCallRecord[];
  /** The graph's nodes the call went through, in order (agent tests' nodes_reached). */
  nodes?: string[];
};

export interface VoiceAgent {
  /** True for an agent that opens with the contact's audio greeting when there is one (the session loads it). */
  readonly wantsGreetingAudio?: boolean;
  onStart(context: AgentContext, controls: AgentControls): void | Promise<void>;
  onAudio(frame: AudioFrame): void | Promise<void>;
  /** The wall clock moved (the session's heartbeat, also while no audio arrives): time limits are checked. */
  onTick?(wallMs: number): void | Promise<void>;
  onMark(name: string): void | Promise<void>;
  /** The callee pressed a key (reported on the media stream or by the carrier's callbacks), at the call's clock. */
  onDtmf?(digit: string, atMs: number): void | Promise<void>;
  /** The caller typed a turn (a web call's page): their words as if heard, with no speech-to-text; "": they are typing. */
  onText?(text: string): void | Promise<void>;
  onEnd(reason: EndReason): void | Promise<void>;
  /** The carrier's answering-machine verdict, when it arrives after the media started (asynchronous detection). */
  onMachine?(answeredBy: string): void | Promise<void>;
  /** The agent's results (absent for agents that gather nothing). */
  outcome?(): AgentOutcome;
  /** Offline speech: a line the caller is about to say, with its sound (an agent test's persona caller). */
  learnLine?(clip: { text: string; samples: Int16Array; rate: SampleRate }): void;
}
