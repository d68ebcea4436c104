// What a call's conversation agent is made of: the run's agent graph (the definition version the run was started
// with), its variables and disposition codes, and the engines it talks with.
import { eq } from "drizzle-orm";
import { workflowDefinitions, workflowRuns, workflows } from "../../db/schema";
import { getDb } from "../../lib/db";
import { parseStoredDefinition } from "../../workflows/store";
import { ClipSpeechToText, ClipTextToSpeech, type KnownClip } from "./clip-speech";
import type { Engines } from "./conversation-agent";
import { Conversation } from "./graph";
import { ScriptedModel, type ScriptStep } from "./scripted-model";

/** The deterministic engines (tests, the demo, local development): a scripted model and the known clips. */
export type ScriptedEngines = { script: ScriptStep[]; clips: KnownClip[] /** Speech fails for these texts (a provider's 5xx). */; ttsFailsOn?: string[] };

export function scriptedEngines(e: ScriptedEngines): Engines {
  const tts = new ClipTextToSpeech(e.clips);
  const fails = new Set(e.ttsFailsOn ?? []);
  return {
    model: new ScriptedModel(e.script),
    stt: new ClipSpeechToText(e.clips),
    tts: {
      synthesize: async (text) => {
        if (fails.has(text)) throw new Error("text-to-speech answered HTTP 503");
        return tts.synthesize(text);
      },
    },
  };
}

/** The run's agent as a conversation, with its workflow_configurations; null when the run has no usable definition. */
export async function conversationFor(
  env: Env,
  runId: number,
  variables: Record<string, unknown>,
): Promise<{ conversation: Conversation; configurations: Record<string, unknown> } | null> {
  const db = getDb(env);
  const run = await db
    .select({ definitionId: workflowRuns.definitionId, workflowId: workflowRuns.workflowId })
    .from(workflowRuns)
    .where(eq(workflowRuns.id, runId))
    .get();
  if (!run?.definitionId) return null;
  const def = await db.select({ text: workflowDefinitions.definition }).from(workflowDefinitions).where(eq(workflowDefinitions.id, run.definitionId)).get();
  const wf = run.workflowId
    ? await db
        .select({ codes: workflows.callDispositionCodes, configurations: workflows.workflowConfigurations })
        .from(workflows)
        .where(eq(workflows.id, run.workflowId))
        .get()
    : undefined;
  const codes = Array.isArray(wf?.codes?.disposition_codes) ? (wf.codes.disposition_codes as unknown[]).filter((c): c is string => typeof c === "string") : [];
  try {
    const stored: unknown = def?.text ?? null;
    const conversation = new Conversation(typeof stored === "string" ? parseStoredDefinition(stored) : stored, variables, codes);
    return { conversation, configurations: wf?.configurations ?? {} };
  } catch {
    return null;
  }
}
