// How the voice agent takes turns: the audio-clock bounds that find the callee's turn, the wall-clock bounds of its
// idle policy (filler, re-prompt, dead air), what it says then, and how it waits out an answering machine. An agent's
// `workflow_configurations.voice_agent.turn` overrides them (src/calls/agent/engines.ts).

export type TurnSettings = {
  /** The callee's silence after speech that ends their turn. */
  endOfTurnMs: number;
  /** Voiced audio shorter than this is noise, not a turn. */
  minSpeechMs: number;
  /** The callee's voice over the agent this long pauses it (a cough, a short "uh-huh" is less); their words decide. */
  interruptMinMs: number;
  /** The callee's silence (after the agent finished) before they are asked whether they are still there. */
  repromptAfterMs: number;
  maxReprompts: number;
  repromptText: string;
  goodbyeText: string;
  errorText: string;
  /** After the callee's turn, this long without the agent's voice (a slow model) gets a short filler. 0: never. */
  fillerAfterMs: number;
  fillerText: string;
  /** The longest the callee waits for a reply (or a goodbye) before the agent gives up: the dead-air limit. */
  maxWaitMs: number;
  /** Said when the call's media came back after a gap this long or longer (the service restarted mid-call). */
  resumeAfterMs: number;
  resumeText: string;
  /** After an answering machine's greeting, this much quiet means its tone has passed: the message starts. */
  afterToneMs: number;
  /** A machine still talking after this long is hung up on without a message. */
  maxMachineMs: number;
  /** The message left on a machine (template variables filled from the run's); null: the call's opening greeting. */
  voicemailText: string | null;
};

export const DEFAULT_TURN_SETTINGS: TurnSettings = {
  endOfTurnMs: 700,
  minSpeechMs: 200,
  interruptMinMs: 300,
  repromptAfterMs: 8000,
  maxReprompts: 1,
  repromptText: "Are you still there?",
  goodbyeText: "It seems this is not a good time. Goodbye!",
  errorText: "I'm sorry, I'm having trouble on my side. We'll try you again later. Goodbye!",
  fillerAfterMs: 1500,
  fillerText: "One moment.",
  maxWaitMs: 6000,
  resumeAfterMs: 1000,
  resumeText: "Sorry, the line cut out for a moment.",
  afterToneMs: 1200,
  maxMachineMs: 30_000,
  voicemailText: null,
};
