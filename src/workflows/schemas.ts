// Request and response shapes of the agent (workflow) operations. Only the definition's shape is checked here
// (a 422 with loc); its structure (start, ends, edges, required fields) is the validate operation's job, so drafts save.
import { z } from "@hono/zod-openapi";
import { AnalysisSettings } from "./analysis-schema";
import { NODE_TYPES } from "./validate";
import { NewVoiceAgentSettings, VoiceAgentSettings } from "./voice-settings";
import { DTMF_KEYS, HttpTools } from "./tools";
import { Retention } from "./retention";
import { webhookNodeUrlProblem } from "./webhook-node";

export const MAX_NODES = 500;
export const MAX_EDGES = 2000;
/** Serialized size limits, well inside a D1 row. */
export const MAX_DEFINITION_BYTES = 512 * 1024;
export const MAX_OBJECT_BYTES = 64 * 1024;
/** Free-text fields of a definition (characters). */
export const MAX_PROMPT_CHARS = 32_000;
// Greetings longer than a carrier's per-utterance limit are spoken in parts; this bounds the whole (~10 minutes of speech).
export const MAX_GREETING_CHARS = 10_000;
export const MAX_CONDITION_CHARS = 4000;
export const MAX_URL_CHARS = 2048;
export const MAX_SHORT_TEXT = 255;

/** An enum whose absence is reported as `missing` like any other field (zod alone calls it a bad option). */
const requiredEnum = <const T extends readonly [string, ...string[]]>(values: T) =>
  z
    .string()
    .pipe(z.enum(values))
    .openapi({ type: "string", enum: [...values] });

const byteLength = (v: unknown) => new TextEncoder().encode(JSON.stringify(v) ?? "").length;

/** A JSON object field that must stay small enough to store. */
const smallObject = (description: string) =>
  z
    .record(z.string(), z.unknown())
    .refine((v) => byteLength(v) <= MAX_OBJECT_BYTES, { message: `Must be at most ${MAX_OBJECT_BYTES} bytes as JSON` })
    .openapi({ description });

// Unknown keys are kept inside the definition: the editor stores its own (positions, display names) there.
export const NodeData = z
  .looseObject({
    prompt: z
      .string()
      .max(MAX_PROMPT_CHARS)
      .nullable()
      .optional()
      .openapi({ description: `startCall, agentNode, endCall: what the agent does at this step (at most ${MAX_PROMPT_CHARS} characters)` }),
    greeting: z
      .string()
      .max(MAX_GREETING_CHARS)
      .nullable()
      .optional()
      .openapi({ description: `startCall: the first words of the call (at most ${MAX_GREETING_CHARS} characters)` }),
    url: z.string().max(MAX_URL_CHARS).nullable().optional().openapi({ description: "webhook: the address called" }),
    destination: z
      .string()
      .max(MAX_SHORT_TEXT)
      .nullable()
      .optional()
      .openapi({ description: "transferCall: the person's number (E.164), or for ari a dial string (PJSIP/100) or SIP URI" }),
    mode: z
      .enum(["cold", "warm"])
      .nullable()
      .optional()
      .openapi({ description: "transferCall: cold hands over at once; warm first tells the person about the call" }),
    message: z.string().max(MAX_CONDITION_CHARS).nullable().optional().openapi({ description: "transferCall: said to the caller before the hand-over" }),
    whisper_prompt: z
      .string()
      .max(MAX_CONDITION_CHARS)
      .nullable()
      .optional()
      .openapi({ description: "transferCall (warm): guides the summary the person hears before the two are connected" }),
    timeout_seconds: z.int().min(5).max(120).nullable().optional().openapi({ description: "transferCall: how long the person's phone may ring (default 30)" }),
    allow_dtmf: z.boolean().nullable().optional().openapi({ description: "The model may press keys here (send_dtmf), e.g. to get through a phone menu" }),
    extraction_variables: z
      .array(
        z
          .looseObject({
            name: z.string().max(MAX_SHORT_TEXT).openapi({ description: "The variable's name (letters, digits and _), a key of the run's gathered_context" }),
            sensitive: z.boolean().optional().openapi({
              description:
                "Its value is personal data: where the organization redacts stored transcripts (redact_pii), the value is replaced by [redacted] in the transcript, gathered_context and tool-call arguments before they are stored",
            }),
          })
          .openapi({ description: "Also type (string, number, boolean) and prompt: what the model is asked to extract" }),
      )
      .max(100)
      .optional()
      .openapi({ description: "agentNode: the values the model extracts from the conversation at this step" }),
    trigger_path: z.string().max(MAX_SHORT_TEXT).nullable().optional().openapi({
      description:
        "apiTrigger: the node's trigger URL is POST /public/trigger/{trigger_path} (also accepted by POST /public/agent/{path}); unique in the organization",
    }),
  })
  .openapi("WorkflowNodeData");

export const WorkflowNode = z
  .looseObject({
    id: z.string().min(1).max(MAX_SHORT_TEXT),
    type: requiredEnum(NODE_TYPES),
    data: NodeData.optional(),
  })
  .openapi("WorkflowNode");

export const WorkflowEdge = z
  .looseObject({
    id: z.string().min(1).max(MAX_SHORT_TEXT),
    source: z.string().min(1).max(MAX_SHORT_TEXT),
    target: z.string().min(1).max(MAX_SHORT_TEXT),
    data: z
      .looseObject({
        label: z.string().max(MAX_SHORT_TEXT).nullable().optional().openapi({ description: "Name of the transition; distinct among a node's outgoing edges" }),
        condition: z.string().max(MAX_CONDITION_CHARS).nullable().optional().openapi({ description: "When the agent takes this transition" }),
        dtmf: z
          .string()
          .regex(DTMF_KEYS, "Keys: 0-9, *, #, A-D")
          .nullable()
          .optional()
          .openapi({ description: "The callee pressing these keys takes this transition at once (without the model)" }),
        on: z
          .enum(["no_answer"])
          .nullable()
          .optional()
          .openapi({ description: "From a transferCall node: the way on when the transfer does not connect (no answer, failed, unsupported)" }),
      })
      .nullable()
      .optional(),
  })
  .openapi("WorkflowEdge");

const definition = (minNodes: number) =>
  z
    .looseObject({
      nodes: z.array(WorkflowNode).min(minNodes).max(MAX_NODES),
      edges: z.array(WorkflowEdge).max(MAX_EDGES).default([]),
      tools: HttpTools.optional(),
    })
    .refine((v) => byteLength(v) <= MAX_DEFINITION_BYTES, { message: `The definition must be at most ${MAX_DEFINITION_BYTES} bytes as JSON` })
    // Drafts may be saved incomplete, but never holding an address the service must not call (SSRF): a webhook
    // node's url is refused here, at its field, like a tool's url in its own schema.
    .superRefine((v, ctx) => {
      v.nodes.forEach((n, i) => {
        const url = n.type === "webhook" ? n.data?.url : null;
        const why = typeof url === "string" && url.trim() ? webhookNodeUrlProblem(url) : null;
        if (why) ctx.addIssue({ code: "custom", path: ["nodes", i, "data", "url"], message: why });
      });
    });

/** On create a definition needs at least one node; on update an emptied draft may still be saved. */
export const CreateDefinition = definition(1).openapi("WorkflowDefinition");
export const UpdateDefinition = definition(0).openapi("WorkflowDefinitionUpdate");

const Name = z.string().trim().min(1).max(255);

export const DispositionCodes = z
  .looseObject({ disposition_codes: z.array(z.string().trim().min(1).max(255)).max(500).default([]) })
  .refine((v) => byteLength(v) <= MAX_OBJECT_BYTES, { message: `Must be at most ${MAX_OBJECT_BYTES} bytes as JSON` })
  .openapi("CallDispositionCodes");

/** Free-form agent settings; `voice_agent`, when present, is checked (it names providers and holds their keys). */
const configurations = (voice: typeof VoiceAgentSettings | typeof NewVoiceAgentSettings, name: string) =>
  z
    .looseObject({
      voice_agent: voice.optional(),
      analysis: AnalysisSettings.optional(),
      retention: Retention.nullable().optional().openapi({
        description: "This agent's runs kept for other periods than the organization's data policy: a kind left out or null follows the organization",
      }),
    })
    .refine((v) => byteLength(v) <= MAX_OBJECT_BYTES, { message: `Must be at most ${MAX_OBJECT_BYTES} bytes as JSON` })
    .openapi(name, {
      description:
        "Agent settings: `voice_agent` chooses the model and speech providers, `analysis` asks for post-call analysis, `retention` overrides the organization's data retention; other keys are kept as sent",
    });
const Configurations = configurations(VoiceAgentSettings, "WorkflowConfigurations");
const NewConfigurations = configurations(NewVoiceAgentSettings, "NewWorkflowConfigurations");

// The request bodies are strict; the definition, its nodes and the free-form objects inside stay open.
export const CreateWorkflow = z
  .strictObject({
    name: Name,
    workflow_definition: CreateDefinition,
    template_context_variables: smallObject("Default values of template variables").optional(),
    call_disposition_codes: DispositionCodes.optional(),
    workflow_configurations: NewConfigurations.optional(),
  })
  .openapi("CreateWorkflow");

export const UpdateWorkflow = z
  .strictObject({
    name: Name.optional(),
    workflow_definition: UpdateDefinition.optional(),
    template_context_variables: smallObject("Default values of template variables").optional(),
    call_disposition_codes: DispositionCodes.optional(),
    workflow_configurations: Configurations.optional(),
  })
  .openapi("UpdateWorkflow");

export const WORKFLOW_STATUSES = ["active", "archived"] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

export const UpdateStatus = z.strictObject({ status: requiredEnum(WORKFLOW_STATUSES) }).openapi("UpdateWorkflowStatus");

const Json = z.record(z.string(), z.unknown());

export const Workflow = z
  .object({
    id: z.number().int(),
    name: z.string(),
    status: z.string().openapi({ example: "active" }),
    created_at: z.string(),
    updated_at: z.string(),
    workflow_definition: Json.openapi({ description: "The current version's nodes and edges" }),
    current_definition_id: z.number().int().nullable(),
    template_context_variables: Json,
    call_disposition_codes: z.looseObject({ disposition_codes: z.array(z.unknown()) }),
    total_runs: z.number().int(),
    workflow_configurations: Json,
    version_number: z.number().int(),
    version_status: z.string().openapi({ example: "published" }),
    workflow_uuid: z.string().openapi({ description: "The stable Agent UUID" }),
  })
  .openapi("Workflow");

export const WorkflowVersion = z
  .object({
    id: z.number().int().openapi({ description: "The definition id" }),
    workflow_id: z.number().int(),
    version_number: z.number().int(),
    version_status: z.string().openapi({ description: "`published` for the current version, `superseded` for earlier ones" }),
    workflow_definition: Json,
    created_at: z.string(),
  })
  .openapi("WorkflowVersion");

const DefinitionIssue = z.object({
  kind: z.enum(["node", "edge", "workflow"]),
  id: z.string().nullable(),
  field: z.string().nullable(),
  message: z.string(),
});

export const ValidationResult = z
  .object({
    is_valid: z.boolean().openapi({ description: "True when `errors` is empty; warnings never make a definition invalid" }),
    errors: z.array(DefinitionIssue),
    warnings: z.array(DefinitionIssue).openapi({
      description:
        "Things worth knowing that do not make the definition invalid, e.g. a Start greeting longer than some carrier speaks in one utterance (the message names the carriers and their limits): it is then spoken in several parts, split at sentence boundaries",
    }),
  })
  .openapi("WorkflowValidationResult");

/** The 409 of the operations that need a usable agent (calls, campaign create/start/resume/redial). */
export const AgentConflict = {
  description:
    "Conflict with the current state: archived agent, no ready telephony configuration, ... An agent whose definition fails validation is refused too: `detail` names the problems and `errors` lists every one (as POST /workflow/{workflow_id}/validate does).",
  content: {
    "application/json": {
      schema: z
        .object({
          detail: z.string(),
          errors: z.array(DefinitionIssue).optional().openapi({ description: "Only for an invalid agent definition: every problem found" }),
        })
        .openapi("AgentConflict"),
    },
  },
};

export const ListQuery = z.object({
  status: z.enum(WORKFLOW_STATUSES).optional().openapi({ description: "Only agents in this status" }),
});
