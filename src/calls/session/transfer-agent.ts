// A test and demo agent that hands the call to a person at once, as the run's variables say (`transfer_to`,
// `transfer_mode` cold|warm, `transfer_timeout` seconds, `transfer_summary`): it stands in for the conversation
// agent's transfer node, so the session's and the carriers' transfers can be tried alone. Warm, the whisper is the
// summary as audio (a tone for its length: the test only needs real audio). Each outcome goes to the transcript;
// after no_answer or failed it keeps the caller (the call goes on until the callee hangs up or falls silent).
import type { SampleRate } from "../../lib/audio/resample";
import type { AgentContext, AgentControls, TransferOutcome, VoiceAgent } from "../../agent/voice-agent";

function tone(seconds: number, rate: SampleRate): Int16Array {
  const out = new Int16Array(Math.round(seconds * rate));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate));
  return out;
}

export class TransferTestAgent implements VoiceAgent {
  outcomes: TransferOutcome[] = [];

  onStart(ctx: AgentContext, controls: AgentControls) {
    const v = ctx.variables;
    const mode = v.transfer_mode === "warm" ? "warm" : "cold";
    const summary = v.transfer_summary ?? "Ada wants twelve seats.";
    const rate = 8000 as SampleRate;
    const asked = controls.now();
    // Not awaited: the stream goes on while the carrier is asked and the person's phone rings.
    void controls
      .transfer({
        destination: v.transfer_to ?? "",
        mode,
        summary,
        summaryAudio: mode === "warm" ? { samples: tone(1, rate), rate } : null,
        timeoutSeconds: Number(v.transfer_timeout ?? 20),
      })
      .then((outcome) => {
        this.outcomes.push(outcome);
        controls.log({ role: "agent", text: `transfer: ${outcome}`, startMs: asked, endMs: controls.now() });
      });
  }

  onAudio() {}
  onMark() {}
  onEnd() {}
}
