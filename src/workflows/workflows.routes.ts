// Agents (workflows): create, list, fetch, update (versioned), archive/restore, validate, versions.
import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../lib/app";
import { actorOf } from "../lib/audit";
import { getDb } from "../lib/db";
import { notFound } from "../lib/errors";
import { isObject } from "../lib/helpers";
import { decodeCursor, pageOf, pageQuery, toPage } from "../lib/pagination";
import { errors, idParam, json } from "../lib/schemas";
import { SecretBox } from "../lib/secret-box";
import { CreateWorkflow, ListQuery, UpdateStatus, UpdateWorkflow, ValidationResult, Workflow, WorkflowVersion } from "./schemas";
import {
  countRuns,
  createWorkflow,
  getVersion,
  getWorkflow,
  listVersions,
  listWorkflows,
  setWorkflowStatus,
  takenTriggerPaths,
  updateWorkflow,
  type StoredVersion,
  type StoredWorkflow,
} from "./store";
import { validateDefinition, type ValidationResult as Result } from "./validate";
import { speechLimits } from "./speech-limits";
import { maskVoiceSecrets, sealVoiceSecrets } from "./voice-settings";
import { maskToolHeaders, refuseConfigurationTools, sealToolHeaders } from "./tools";
import { ownOriginProblems } from "./own-origin";
import { ApiError } from "../lib/errors";
import { CreateFromTemplate, createBody, findStarter, runsOfflineEngines, STARTER_AGENTS, TemplateParam, templateView, WorkflowTemplateList } from "./starters";
import type { AppEnv } from "../lib/types";
import type { Context } from "hono";

const tags = ["workflows"];
const WorkflowId = idParam("workflow_id");
const VersionParams = z.object({ ...idParam("workflow_id").shape, ...idParam("version_number").shape });
const body = <T extends z.ZodTypeAny>(schema: T) => ({ content: { "application/json": { schema } }, required: true });

const create = createRoute({
  method: "post",
  path: "/workflow/create",
  tags,
  summary: "Create an agent (its definition becomes version 1)",
  description:
    "Only the definition's shape is checked here; structural problems are saved and reported by validate. A definition without nodes is refused, and so is an address the service must not call (a webhook node's or a tool's url at a private, loopback or metadata address, or at this service itself): a 422 at the field. HTTP tools are `workflow_definition.tools`; `workflow_configurations.tools` is a 422.",
  request: { body: body(CreateWorkflow) },
  responses: { 200: json(Workflow), ...errors(401, 422) },
});

const list = createRoute({
  method: "get",
  path: "/workflow/fetch",
  tags,
  summary: "List the organization's agents, newest first",
  request: { query: pageQuery.extend(ListQuery.shape) },
  responses: { 200: json(pageOf(Workflow)), ...errors(401, 422) },
});

const fetchOne = createRoute({
  method: "get",
  path: "/workflow/fetch/{workflow_id}",
  tags,
  summary: "Get an agent with its current definition and run count",
  request: { params: WorkflowId },
  responses: { 200: json(Workflow), ...errors(401, 404, 422) },
});

const update = createRoute({
  method: "put",
  path: "/workflow/{workflow_id}",
  tags,
  summary: "Update an agent; a changed definition becomes a new version",
  description:
    "Only the fields sent change. A definition that differs from the current one is stored as version_number + 1 with a new current_definition_id; earlier versions are kept. The definition's addresses are checked as on create (a 422 at the field).",
  request: { params: WorkflowId, body: body(UpdateWorkflow) },
  responses: { 200: json(Workflow), ...errors(401, 404, 409, 422) },
});

const setStatus = createRoute({
  method: "put",
  path: "/workflow/{workflow_id}/status",
  tags,
  summary: "Archive or restore an agent",
  description: "An archived agent keeps its definition and history but takes no calls and no new campaigns (409).",
  request: { params: WorkflowId, body: body(UpdateStatus) },
  responses: { 200: json(Workflow), ...errors(401, 404, 422) },
});

const validate = createRoute({
  method: "post",
  path: "/workflow/{workflow_id}/validate",
  tags,
  summary: "Check the current definition for structural problems",
  description: "Always 200 for an existing agent: is_valid false with every problem found. Places no call.",
  request: { params: WorkflowId },
  responses: { 200: json(ValidationResult), ...errors(401, 404, 422) },
});

const versions = createRoute({
  method: "get",
  path: "/workflow/{workflow_id}/versions",
  tags,
  summary: "List an agent's definition versions, newest first",
  request: { params: WorkflowId, query: pageQuery },
  responses: { 200: json(pageOf(WorkflowVersion)), ...errors(401, 404, 422) },
});

const version = createRoute({
  method: "get",
  path: "/workflow/{workflow_id}/versions/{version_number}",
  tags,
  summary: "Get one definition version of an agent",
  request: { params: VersionParams },
  responses: { 200: json(WorkflowVersion), ...errors(401, 404, 422) },
});

const templates = createRoute({
  method: "get",
  path: "/workflow/templates",
  tags,
  summary: "List the starter templates (complete agents with test values)",
  description:
    "Lead qualification with a warm transfer, appointment booking with an HTTP tool, an inbound receptionist. Each has test values for its variables, a scripted model that walks its graph offline, and the placeholders to change before real calls (docs/templates.md).",
  responses: { 200: json(WorkflowTemplateList), ...errors(401) },
});

const fromTemplate = createRoute({
  method: "post",
  path: "/workflow/templates/{template_id}",
  tags,
  summary: "Create an agent from a starter template",
  description:
    "Creates the agent exactly as POST /workflow/create would from the template's definition, test values (as template_context_variables) and dispositions; where the deployment runs the offline engines, the template's scripted model too (scripted_model). The body may be empty.",
  request: {
    params: TemplateParam,
    body: { content: { "application/json": { schema: CreateFromTemplate } }, required: false },
  },
  responses: { 200: json(Workflow), ...errors(401, 404, 422) },
});

function view(w: StoredWorkflow, totalRuns: number) {
  const codes = isObject(w.callDispositionCodes) ? w.callDispositionCodes : {};
  return {
    id: w.id,
    name: w.name,
    status: w.status,
    created_at: w.createdAt,
    updated_at: w.updatedAt,
    // A stored definition that isn't an object (only possible by writing D1 directly) is shown as empty.
    workflow_definition: isObject(w.definition) ? maskToolHeaders(w.definition) : {},
    current_definition_id: w.currentDefinitionId,
    template_context_variables: w.templateContextVariables,
    call_disposition_codes: { ...codes, disposition_codes: Array.isArray(codes.disposition_codes) ? codes.disposition_codes : [] },
    total_runs: totalRuns,
    workflow_configurations: maskVoiceSecrets(w.workflowConfigurations),
    version_number: w.versionNumber,
    version_status: "published",
    workflow_uuid: w.uuid,
  };
}

const versionView = (v: StoredVersion, current: StoredWorkflow) => ({
  id: v.id,
  workflow_id: v.workflowId,
  version_number: v.versionNumber,
  version_status: v.id === current.currentDefinitionId ? "published" : "superseded",
  workflow_definition: isObject(v.definition) ? maskToolHeaders(v.definition) : {},
  created_at: v.createdAt,
});

async function withRuns(db: ReturnType<typeof getDb>, orgId: number, w: StoredWorkflow) {
  const runs = await countRuns(db, orgId, [w.id]);
  return view(w, runs.get(w.id) ?? 0);
}

/** 422 for a definition or settings the API must not keep: tools under the settings, an address that is this service. */
function refuseMisplaced(
  c: { env: Env; req: { url: string } },
  definition: Record<string, unknown> | undefined,
  configurations: Record<string, unknown> | undefined,
) {
  refuseConfigurationTools(configurations);
  const items = definition ? ownOriginProblems(definition, [c.env.PUBLIC_BASE_URL, new URL(c.req.url).origin]) : [];
  if (items.length) throw new ApiError(422, items);
}

/** The validator is total, but validate must answer 200 whatever happens inside it. */
function safeValidate(definition: unknown, taken: ReadonlySet<string>): Result {
  try {
    return validateDefinition(definition, { takenTriggerPaths: taken, speechLimits: speechLimits() });
  } catch {
    return { is_valid: false, errors: [{ kind: "workflow", id: null, field: null, message: "The definition could not be checked" }], warnings: [] };
  }
}

type CreateInput = ReturnType<typeof CreateWorkflow.parse>;

/** Stores a new agent (its definition version 1) from a create body zod has checked. */
async function createAgent(c: Context<AppEnv>, input: CreateInput) {
  refuseMisplaced(c, input.workflow_definition, input.workflow_configurations);
  const db = getDb(c.env);
  const box = () => SecretBox.fromEnv(c.env);
  const configurations = input.workflow_configurations && (await sealVoiceSecrets(box, c.get("orgId"), input.workflow_configurations, null));
  const definition = await sealToolHeaders(box, c.get("orgId"), input.workflow_definition, null);
  const row = await createWorkflow(
    db,
    c.get("orgId"),
    {
      name: input.name,
      definition,
      templateContextVariables: input.template_context_variables,
      callDispositionCodes: input.call_disposition_codes,
      workflowConfigurations: configurations,
    },
    actorOf(c),
  );
  return view(row, 0);
}

export const workflowsRouter = createRouter()
  .openapi(create, async (c) => c.json(await createAgent(c, c.req.valid("json")), 200))
  .openapi(templates, (c) => c.json({ items: STARTER_AGENTS.map(templateView) }, 200))
  .openapi(fromTemplate, async (c) => {
    const { template_id } = c.req.valid("param");
    const starter = findStarter(template_id);
    if (!starter) throw notFound("Template");
    // No body: the template's own name and the deployment's choice of model.
    const options = c.req.valid("json") ?? {};
    const scripted = options.scripted_model ?? runsOfflineEngines(c.env);
    // The same schema as POST /workflow/create: a template is stored only as any agent would be.
    const input = CreateWorkflow.parse(createBody(starter, { name: options.name, scripted }));
    return c.json(await createAgent(c, input), 200);
  })
  .openapi(list, async (c) => {
    const { limit, cursor, status } = c.req.valid("query");
    const orgId = c.get("orgId");
    const db = getDb(c.env);
    const rows = await listWorkflows(db, orgId, { limit, before: decodeCursor(cursor), status });
    const runs = await countRuns(
      db,
      orgId,
      rows.slice(0, limit).map((r) => r.id),
    );
    return c.json(
      toPage(rows, limit, (r) => view(r, runs.get(r.id) ?? 0)),
      200,
    );
  })
  .openapi(fetchOne, async (c) => {
    const { workflow_id } = c.req.valid("param");
    const db = getDb(c.env);
    const row = await getWorkflow(db, c.get("orgId"), workflow_id);
    if (!row) throw notFound("Workflow");
    return c.json(await withRuns(db, c.get("orgId"), row), 200);
  })
  .openapi(update, async (c) => {
    const { workflow_id } = c.req.valid("param");
    const input = c.req.valid("json");
    refuseMisplaced(c, input.workflow_definition, input.workflow_configurations);
    const db = getDb(c.env);
    let configurations = input.workflow_configurations;
    let definition: Record<string, unknown> | undefined = input.workflow_definition;
    if (definition && Array.isArray(definition.tools) && definition.tools.length) {
      // Header values sent as their mask keep the current version's sealed values.
      const stored = await getWorkflow(db, c.get("orgId"), workflow_id);
      if (!stored) throw notFound("Workflow");
      definition = await sealToolHeaders(() => SecretBox.fromEnv(c.env), c.get("orgId"), definition, stored.definition);
    }
    if (configurations?.voice_agent) {
      // Keys kept by their mask are taken from the stored settings.
      const stored = await getWorkflow(db, c.get("orgId"), workflow_id);
      if (!stored) throw notFound("Workflow");
      configurations = await sealVoiceSecrets(() => SecretBox.fromEnv(c.env), c.get("orgId"), configurations, stored.workflowConfigurations);
    }
    const row = await updateWorkflow(
      db,
      c.get("orgId"),
      workflow_id,
      {
        name: input.name,
        definition,
        templateContextVariables: input.template_context_variables,
        callDispositionCodes: input.call_disposition_codes,
        workflowConfigurations: configurations,
      },
      actorOf(c),
    );
    return c.json(await withRuns(db, c.get("orgId"), row), 200);
  })
  .openapi(setStatus, async (c) => {
    const { workflow_id } = c.req.valid("param");
    const { status } = c.req.valid("json");
    const db = getDb(c.env);
    const row = await setWorkflowStatus(db, c.get("orgId"), workflow_id, status, actorOf(c));
    return c.json(await withRuns(db, c.get("orgId"), row), 200);
  })
  .openapi(validate, async (c) => {
    const { workflow_id } = c.req.valid("param");
    const orgId = c.get("orgId");
    const db = getDb(c.env);
    const row = await getWorkflow(db, orgId, workflow_id);
    if (!row) throw notFound("Workflow");
    const taken = await takenTriggerPaths(db, orgId, row.id, row.definition);
    return c.json(safeValidate(row.definition, taken), 200);
  })
  .openapi(versions, async (c) => {
    const { workflow_id } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    const db = getDb(c.env);
    const current = await getWorkflow(db, c.get("orgId"), workflow_id);
    if (!current) throw notFound("Workflow");
    const rows = await listVersions(db, current.id, { limit, before: decodeCursor(cursor) });
    return c.json(
      toPage(rows, limit, (v) => versionView(v, current)),
      200,
    );
  })
  .openapi(version, async (c) => {
    const { workflow_id, version_number } = c.req.valid("param");
    const db = getDb(c.env);
    const current = await getWorkflow(db, c.get("orgId"), workflow_id);
    if (!current) throw notFound("Workflow");
    const row = await getVersion(db, current.id, version_number);
    if (!row) throw notFound("Workflow version");
    return c.json(versionView(row, current), 200);
  });
