// What a call's conversation agent is made of: the run's agent graph (the definition version the run was started
// with), its variables and disposition codes, and the engines it talks with.
import { eq } from "drizzle-orm";
import { workflowDefinitions, workflowRuns, workflows } from "../db/schema";
import { getDb } from "../lib/db";
import { parseStoredDefinition } from "../workflows/store";
import { openToolHeaders } from "../workflows/tools";
import { SecretBox } from "../lib/secret-box";
import type { ToolAccess } from "./action-runner";
import { ClipSpeechToText, ClipTextToSpeech, type KnownClip } from "./clip-speech";
import type { Engines } from "./conversation-agent";
import { Conversation } from "./graph";
import { ScriptedModel, type ScriptStep } from "./scripted-model";
import { LocalModel } from "./local-model";
import { RESERVED_TOOL_NAMES } from "./actions";

/** The deterministic engines (tests, the demo, local development): a scripted model and the known clips. */
export type ScriptedEngines = {
  script: ScriptStep[];
  clips: KnownClip[];
  /** Speech fails for these texts (a provider's 5xx). */
  ttsFailsOn?: string[];
  /** Local development's offline model instead of the script (an agent test of an agent that names no model). */
  localModel?: boolean;
  /**
   * The agent's own model from its settings instead of the script (an agent test of an agent on a real model): the
   * session builds it (modelFor), speech stays on the clips.
   */
  ownModel?: boolean;
};

export function scriptedEngines(e: ScriptedEngines): Engines {
  const tts = new ClipTextToSpeech(e.clips);
  const fails = new Set(e.ttsFailsOn ?? []);
  return {
    model: e.localModel ? new LocalModel(RESERVED_TOOL_NAMES) : new ScriptedModel(e.script),
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
  // One round trip: the run, the definition version it was started with, and its agent's settings.
  const row = await getDb(env)
    .select({ definition: workflowDefinitions.definition, codes: workflows.callDispositionCodes, configurations: workflows.workflowConfigurations })
    .from(workflowRuns)
    .innerJoin(workflowDefinitions, eq(workflowDefinitions.id, workflowRuns.definitionId))
    .leftJoin(workflows, eq(workflows.id, workflowRuns.workflowId))
    .where(eq(workflowRuns.id, runId))
    .get();
  if (!row) return null;
  const listed = row.codes?.disposition_codes;
  const codes = Array.isArray(listed) ? listed.filter((c): c is string => typeof c === "string") : [];
  try {
    const stored: unknown = row.definition;
    const conversation = new Conversation(typeof stored === "string" ? parseStoredDefinition(stored) : stored, variables, codes);
    return { conversation, configurations: row.configurations ?? {} };
  } catch {
    return null;
  }
}

/**
 * What a call's HTTP tools reach with: their headers opened with the deployment's keys (for that request alone), and
 * the organization's network policy, asked of the caller at every request (the calls module knows it).
 */
export function toolAccess(env: Env, orgId: number, allowsPrivate: () => Promise<boolean>): ToolAccess {
  let box: SecretBox | null = null;
  try {
    box = env.ENCRYPTION_KEYS ? SecretBox.fromEnv(env) : null;
  } catch {
    // A malformed key list: a tool with sealed headers then fails as misconfigured, the call goes on.
  }
  return { headers: (tool) => openToolHeaders(box, orgId, tool), allowsPrivate, ownOrigins: [env.PUBLIC_BASE_URL] };
}
