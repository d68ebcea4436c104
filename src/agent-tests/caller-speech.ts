// How the caller's lines sound in a test call. Offline, the caller voice (caller-voice.ts): a fingerprint the agent's
// offline speech-to-text recognizes. Where the run configures a real voice (`caller_voice`, Workers AI's Aura through
// the deployment's AI binding, with the agent's own text-to-speech code: WorkersAiTextToSpeech), each line is spoken
// by it: the agent's offline speech-to-text learns that audio with its words, or the agent's own speech-to-text hears
// it where that is a real engine (test-call.ts). Each line is synthesized once and kept for the call.
import { z } from "@hono/zod-openapi";
import type { KnownClip } from "../agent/clip-speech";
import { WORKERS_AI_TTS_MODEL, WorkersAiTextToSpeech } from "../agent/workers-ai-speech";
import { invalid } from "../lib/errors";
import type { UsableWorkflow } from "../workflows/store";
import { callerClip } from "./caller-voice";
import { usableAi } from "./models";

/** The caller's default Aura speaker: not the agent's default (asteria), so the recording tells the two apart. */
export const CALLER_SPEAKER = "orion";

export const CallerVoice = z
  .strictObject({
    model: z
      .string()
      .regex(/^@cf\/deepgram\/aura/, "A Workers AI Aura text-to-speech model (@cf/deepgram/aura-…)")
      .max(100)
      .default(WORKERS_AI_TTS_MODEL)
      .openapi({ description: "Workers AI's Aura text-to-speech model" }),
    voice: z.string().trim().min(1).max(50).default(CALLER_SPEAKER).openapi({ description: "Aura's speaker" }),
  })
  .openapi("AgentTestCallerVoice");
export type CallerVoice = z.infer<typeof CallerVoice>;

export type CallerSpeech = {
  /** `offline`, or the engine: `workers-ai:<model>:<voice>`. */
  label: string;
  real: boolean;
  /** The line's sound with its words (synthesized once). */
  clip(text: string): Promise<KnownClip>;
  /** A line's sound once `clip` made it (what the caller plays). */
  made(text: string): KnownClip | undefined;
};

/** The run's caller voice: the request's, else the agent's `agent_tests.caller_voice`; null: the offline voice. */
export function callerVoiceFor(env: Env, agent: UsableWorkflow, given: CallerVoice | null | undefined): CallerVoice | null {
  const stored = (agent.workflowConfigurations as { agent_tests?: { caller_voice?: unknown } } | null)?.agent_tests?.caller_voice;
  const loc = given ? ["body", "caller_voice"] : ["body", "workflow_configurations", "agent_tests", "caller_voice"];
  let chosen = given ?? null;
  if (!chosen && stored !== undefined && stored !== null) {
    // The agent's settings are free-form where they are saved: a setting that is not a caller voice is refused here.
    const parsed = CallerVoice.safeParse(stored);
    if (!parsed.success) throw invalid(loc, `The agent's caller voice setting is not one: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    chosen = parsed.data;
  }
  if (chosen && !usableAi(env)) throw invalid(loc, "A caller voice is Workers AI's text-to-speech, and this deployment has no usable AI binding");
  return chosen;
}

export function callerSpeech(env: Env, voice: CallerVoice | null): CallerSpeech {
  const made = new Map<string, KnownClip>();
  const ai = voice ? usableAi(env) : null;
  if (!voice || !ai) {
    return {
      label: "offline",
      real: false,
      clip: async (text) => made.get(text) ?? made.set(text, callerClip(text)).get(text)!,
      made: (text) => made.get(text),
    };
  }
  const tts = new WorkersAiTextToSpeech(ai, voice.model, voice.voice);
  return {
    label: `workers-ai:${voice.model}:${voice.voice}`,
    real: true,
    clip: async (text) => {
      const known = made.get(text);
      if (known) return known;
      let speech: Awaited<ReturnType<typeof tts.synthesize>>;
      try {
        speech = await tts.synthesize(text);
      } catch (err) {
        throw new Error(`The caller's voice failed: ${String((err as Error)?.message ?? err)}`);
      }
      const clip = { text, samples: speech.samples, rate: speech.rate };
      made.set(text, clip);
      return clip;
    },
    made: (text) => made.get(text),
  };
}
