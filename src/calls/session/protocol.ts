// What the Worker tells a call session: the run its media belongs to (in a header of the media socket's upgrade, or
// with connectTo), what tests and the demo prepare before a call, and how its media stands.
import type { VoicemailAction } from "../../agent/voice-agent";
import type { SessionProvider } from "./web-media";
import type { AgentName } from "./agents";
import type { GreetingClip } from "./choose-agent";
import type { CampaignAttempt } from "./store";
import type { ScriptedEngines } from "../../agent/load";
import type { ToolMock } from "../../agent/action-runner";

/** What the Worker's stream route tells the session about its run, in this header of the upgrade. */
export const SESSION_HEADER = "X-Edgedial-Session";

export type SessionStart = {
  runId: number;
  orgId: number;
  /** The carrier, or `web`: the browser's socket (web-media.ts). */
  provider: SessionProvider;
  greeting: string | null;
  /** The R2 key of the contact's audio greeting, which the greeting agent plays; null: none (or gone). */
  greetingRecording?: string | null;
  variables: Record<string, string>;
  /** The organization's recording setting (prepare's `record` wins where given). */
  record: boolean;
  /** The carrier's answering-machine verdict so far, and what the campaign wants done with a machine. */
  answeredBy?: string | null;
  voicemail?: VoicemailAction;
  /** edgedial dialed out (not a caller dialing in, nor a browser): who answered is judged (answering-machine detection). */
  outbound?: boolean;
  /** A campaign's call: the attempt its object hears the agent's disposition for. */
  campaign?: CampaignAttempt | null;
};

export type SessionOptions = {
  agent?: AgentName;
  /** The greeting as audio (a prerecorded clip) for the greeting agent to play. */
  greetingClip?: GreetingClip;
  silenceSeconds?: number;
  maxCallSeconds?: number;
  /** False: the call is not recorded. */
  record?: boolean;
  /** The conversation agent's deterministic engines (tests and the demo): a scripted model and known clips. */
  scripted?: ScriptedEngines;
  /** An agent test's mocked HTTP tool answers, by tool name (docs/agent-tests.md). */
  mockTools?: ToolMock[];
};

/** "none": the media never connected; "live": a socket is attached; "lost": the call goes on without one (it may come back); "ended". */
export type MediaState = "none" | "live" | "lost" | "ended";
