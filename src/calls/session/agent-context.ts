// What an agent is told as it starts (the VoiceAgent seam's AgentContext), read from the session's record: the run,
// its variables and greeting (the contact's audio greeting loaded for an agent that opens with it), the call's rate,
// the carrier's answering-machine verdict, and for a call resumed after a restart the agent's saved state.
import type { AgentContext, VoiceAgent } from "../../agent/voice-agent";
import type { SampleRate } from "../../lib/audio/resample";
import { loadGreeting } from "../../uploads/greetings";
import type { SessionRecord } from "./store";

export async function agentContext(
  uploads: R2Bucket,
  s: Readonly<SessionRecord>,
  at: { agent: VoiceAgent; rate: SampleRate; resumed: boolean; gapMs: number },
): Promise<AgentContext> {
  // The contact's audio greeting, for the voice agent to open with (the greeting agent has its clip already).
  const recording = !at.resumed && at.agent.wantsGreetingAudio ? s.greetingRecording : null;
  const greetingAudio = recording ? await loadGreeting(uploads, recording) : null;
  return {
    runId: s.runId ?? 0,
    variables: s.variables,
    // A recording gone since the call started: the agent's own greeting rather than the recording's name.
    greeting: recording && !greetingAudio ? null : s.greeting || null,
    greetingAudio,
    rate: at.rate,
    answeredBy: s.answeredBy,
    voicemail: s.voicemail,
    outbound: s.outbound,
    resumed: at.resumed ? { state: s.agentState, gapMs: at.gapMs } : null,
  };
}
