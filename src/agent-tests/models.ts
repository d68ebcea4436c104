// The suite's model: what plays a persona caller and judges rubric criteria. An OpenAI-compatible endpoint given in
// the run request (checked against the organization's URL policy like an agent's own endpoint), else the agent's
// `workflow_configurations.agent_tests.model` ({base_url, model}: no key is kept in settings, so it suits an
// endpoint that needs none, such as a local Ollama), else Workers AI through the AI binding on a deployment; offline
// (no binding, or `OFFLINE_ENGINES`) there is none and persona and rubric say so in the results.
import { z } from "@hono/zod-openapi";
import type { ChatMessage, ChatModel } from "../agent/chat";
import { OpenAiModel } from "../agent/openai-model";
import { type AiRunner, WorkersAiModel } from "../agent/workers-ai-model";
import { getDb } from "../lib/db";
import { invalid } from "../lib/errors";
import { checkOutboundUrl } from "../lib/url-guard";
import { allowsPrivatePbx } from "../telephony/calling-policy";
import type { UsableWorkflow } from "../workflows/store";

export const TestModel = z
  .strictObject({
    base_url: z
      .url({ protocol: /^https?$/ })
      .max(500)
      .openapi({ description: "An OpenAI-compatible API's base URL (…/v1)" }),
    model: z.string().trim().min(1).max(200),
    api_key: z.string().max(500).optional().openapi({ description: "Sent as a bearer token; used for this run only, never stored" }),
  })
  .openapi("AgentTestModel");
export type TestModel = z.infer<typeof TestModel>;

/** A persona's and a judge's answers are short: a slow endpoint still gets this long per answer. */
const ANSWER_TIMEOUT_MS = 30_000;

/** The deployment's AI binding where Workers AI answers: not local development's offline engines (`npm run dev` without --workers-ai). */
export function usableAi(env: Env): AiRunner | null {
  const ai = (env as { AI?: AiRunner }).AI;
  return ai && (env as { OFFLINE_ENGINES?: string }).OFFLINE_ENGINES !== "true" ? ai : null;
}

/** The agent's own choice, from its settings (no key). */
function settingsModel(agent: UsableWorkflow): TestModel | null {
  const given = (agent.workflowConfigurations as { agent_tests?: { model?: unknown } } | null)?.agent_tests?.model;
  const parsed = TestModel.safeParse(given);
  return parsed.success ? parsed.data : null;
}

/**
 * The model a run's persona callers and judge use, or null offline. A given endpoint the organization's policy
 * refuses is a 422 at `loc` (the run request's field, or the setting).
 */
export async function testModelFor(env: Env, agent: UsableWorkflow, given: TestModel | null | undefined): Promise<ChatModel | null> {
  const chosen = given ?? settingsModel(agent);
  if (chosen) {
    const verdict = checkOutboundUrl(chosen.base_url, { allowPrivate: await allowsPrivatePbx(getDb(env), agent.orgId) });
    const loc = given ? ["body", "model", "base_url"] : ["body", "workflow_configurations", "agent_tests", "model", "base_url"];
    if (!verdict.ok) throw invalid(loc, `The test model's endpoint is refused: ${verdict.message}`);
    return new OpenAiModel({ baseUrl: chosen.base_url, apiKey: chosen.api_key ?? "", model: chosen.model, timeoutMs: ANSWER_TIMEOUT_MS });
  }
  const ai = usableAi(env);
  return ai ? new WorkersAiModel(ai) : null;
}

/** The model's whole text answer (no tools). */
export async function answer(model: ChatModel, messages: ChatMessage[]): Promise<string> {
  let text = "";
  for await (const e of model.stream({ messages, tools: [] })) if (e.type === "text") text += e.text;
  return text.trim();
}
