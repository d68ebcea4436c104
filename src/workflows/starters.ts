// Starter templates as the API serves them (GET /workflow/templates) and what creating an agent from one stores
// (POST /workflow/templates/{template_id}): the template's definition, test values and dispositions, and where the
// deployment runs the offline engines, its scripted model, so the new agent can be called at once on `npm run dev`.
import { z } from "@hono/zod-openapi";
import { STARTER_AGENTS, type StarterAgent } from "./starter-agents";

export { STARTER_AGENTS };

const ScriptStep = z
  .object({
    user: z.string().optional(),
    prompt: z.string().optional(),
    after: z.enum(["caller", "agent"]).optional(),
    say: z.string().optional(),
    call: z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() }).optional(),
  })
  .openapi("WorkflowTemplateScriptStep");

export const WorkflowTemplate = z
  .object({
    id: z.string().openapi({ example: "lead-qualification" }),
    name: z.string(),
    description: z.string(),
    direction: z.enum(["outbound", "inbound"]).openapi({ description: "inbound: attach the agent to a phone number (docs/inbound.md)" }),
    workflow_definition: z.record(z.string(), z.unknown()).openapi({ description: "The nodes, edges and HTTP tools the agent is created with" }),
    template_context_variables: z
      .record(z.string(), z.string())
      .openapi({ description: "Test values of the template's variables, stored as the agent's defaults (a call's own values win)" }),
    call_disposition_codes: z.array(z.string()),
    scripted_model: z.array(ScriptStep).openapi({
      description: "The scripted model (voice_agent.llm) that walks the graph offline; its lines use the test values",
    }),
    sample_conversation: z.array(z.string()).openapi({ description: "What a caller says, turn by turn, to walk the main path on the scripted model" }),
    change_before_use: z
      .array(z.object({ path: z.string(), description: z.string() }))
      .openapi({ description: "Placeholders to replace before real calls: a transfer destination, an HTTP tool's url" }),
  })
  .openapi("WorkflowTemplate");

export const WorkflowTemplateList = z.object({ items: z.array(WorkflowTemplate) }).openapi("WorkflowTemplateList");

export const TemplateParam = z.object({
  template_id: z
    .string()
    .max(64)
    .openapi({ param: { name: "template_id", in: "path" }, example: "lead-qualification" }),
});

export const CreateFromTemplate = z
  .strictObject({
    name: z.string().trim().min(1).max(255).optional().openapi({ description: "Default: the template's name" }),
    scripted_model: z.boolean().optional().openapi({
      description:
        "Store the template's scripted model as the agent's model (voice_agent.llm), so it runs on the offline engines of local development; scripted models run only where LOCAL_DEV is set. Default: true where the deployment runs the offline engines (`npm run dev` without --workers-ai), else false (the deployment's default engines)",
    }),
  })
  .openapi("CreateWorkflowFromTemplate");

export const templateView = (t: StarterAgent): z.infer<typeof WorkflowTemplate> => ({
  id: t.id,
  name: t.name,
  description: t.description,
  direction: t.direction,
  workflow_definition: structuredClone(t.definition),
  template_context_variables: { ...t.variables },
  call_disposition_codes: [...t.dispositions],
  scripted_model: structuredClone(t.script),
  sample_conversation: [...t.sample],
  change_before_use: t.change.map((c) => ({ ...c })),
});

export const findStarter = (id: string): StarterAgent | undefined => STARTER_AGENTS.find((t) => t.id === id);

/** Whether this deployment runs the offline engines (local development without Workers AI), as the agent's engines decide it. */
export function runsOfflineEngines(env: Env): boolean {
  const e = env as { AI?: unknown; OFFLINE_ENGINES?: string; LOCAL_DEV?: string };
  return e.LOCAL_DEV === "true" && (!e.AI || e.OFFLINE_ENGINES === "true");
}

/** The body POST /workflow/create would take for this template (the same schema checks it before it is stored). */
export function createBody(t: StarterAgent, opts: { name?: string; scripted: boolean }) {
  return {
    name: opts.name ?? t.name,
    workflow_definition: structuredClone(t.definition),
    template_context_variables: { ...t.variables },
    call_disposition_codes: { disposition_codes: [...t.dispositions] },
    ...(opts.scripted ? { workflow_configurations: { voice_agent: { llm: { provider: "scripted", script: structuredClone(t.script) } } } } : {}),
  };
}
