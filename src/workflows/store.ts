// Data access for agents: D1 rows of workflows, their definition versions and API Trigger paths. Every read is
// scoped by organization. The lookups at the bottom are the entry points campaigns and calls use.
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import { workflowDefinitions, workflowRuns, workflowTriggers, workflows } from "../db/schema";
import { auditStatement, type Actor } from "../lib/audit";
import { isoNow } from "../lib/clock";
import { isUniqueViolation, preparedOnce, type Db } from "../lib/db";
import { newestFirst } from "../lib/pagination";
import { ApiErrorWithFields } from "../lib/error-fields";
import { conflict, notFound } from "../lib/errors";
import type { WorkflowStatus } from "./schemas";
import { triggerPathsOf, validateDefinition, type DefinitionError } from "./validate";
import { canonicalJson } from "../lib/canonical-json";

export type WorkflowRow = typeof workflows.$inferSelect;
/** An agent with its current definition, parsed but not trusted (it may be anything a row holds). */
export type StoredWorkflow = WorkflowRow & { definition: unknown };

type Json = Record<string, unknown>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Stored definition text, parsed without trusting it: unreadable text becomes null instead of an exception. */
export function parseStoredDefinition(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

// The definition column is read as raw text (not through drizzle's JSON decoder) so a corrupt row can't throw.
const definitionText = sql<string | null>`${workflowDefinitions.definition}`;

function withDefinition(db: Db) {
  return db
    .select({ w: workflows, definitionText })
    .from(workflows)
    .leftJoin(workflowDefinitions, and(eq(workflowDefinitions.id, workflows.currentDefinitionId), eq(workflowDefinitions.workflowId, workflows.id)));
}

const toStored = (r: { w: WorkflowRow; definitionText: string | null }): StoredWorkflow => ({
  ...r.w,
  definition: parseStoredDefinition(r.definitionText),
});

// Every call start reads its agent by id: the query is built once (preparedOnce).
const workflowById = (db: Db) =>
  withDefinition(db)
    .where(and(eq(workflows.id, sql.placeholder("id")), eq(workflows.orgId, sql.placeholder("orgId"))))
    .prepare();

export async function getWorkflow(db: Db, orgId: number, id: number): Promise<StoredWorkflow | null> {
  const row = await preparedOnce(db, "workflow-by-id", workflowById).get({ id, orgId });
  return row ? toStored(row) : null;
}

export async function listWorkflows(db: Db, orgId: number, opts: { limit: number; before: number | null; status?: WorkflowStatus }): Promise<StoredWorkflow[]> {
  const status = opts.status ? eq(workflows.status, opts.status) : undefined;
  const rows = await newestFirst(withDefinition(db).$dynamic(), workflows.id, opts.before, opts.limit, eq(workflows.orgId, orgId), status).all();
  return rows.map(toStored);
}

/** Runs per agent, counted from the call records. Ids travel as one JSON parameter (D1 binds at most 100). */
export async function countRuns(db: Db, orgId: number, workflowIds: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (workflowIds.length === 0) return out;
  const rows = await db
    .select({ workflowId: workflowRuns.workflowId, n: sql<number>`count(*)` })
    .from(workflowRuns)
    .where(and(eq(workflowRuns.orgId, orgId), sql`${workflowRuns.workflowId} IN (SELECT value FROM json_each(${JSON.stringify(workflowIds)}))`))
    .groupBy(workflowRuns.workflowId)
    .all();
  for (const r of rows) out.set(r.workflowId, Number(r.n));
  return out;
}

/** Which agent owns each path: the one that claimed it first (ties broken by the lower agent id). */
export async function triggerPathOwners(db: Db, orgId: number, paths: string[]): Promise<Map<string, number>> {
  const owners = new Map<string, number>();
  if (paths.length === 0) return owners;
  const rows = await db
    .select({ path: workflowTriggers.triggerPath, workflowId: workflowTriggers.workflowId })
    .from(workflowTriggers)
    .where(and(eq(workflowTriggers.orgId, orgId), sql`${workflowTriggers.triggerPath} IN (SELECT value FROM json_each(${JSON.stringify(paths)}))`))
    .orderBy(workflowTriggers.claimedAt, workflowTriggers.workflowId)
    .all();
  for (const r of rows) if (!owners.has(r.path)) owners.set(r.path, r.workflowId);
  return owners;
}

/** The paths of `definition` that another agent of the organization already owns. */
export async function takenTriggerPaths(db: Db, orgId: number, workflowId: number, definition: unknown): Promise<Set<string>> {
  const owners = await triggerPathOwners(db, orgId, triggerPathsOf(definition));
  return new Set([...owners].filter(([, owner]) => owner !== workflowId).map(([path]) => path));
}

/** Statements that make the agent's trigger rows match `paths`, keeping the claim time of paths it already had. */
function syncTriggers(db: Db, orgId: number, workflowId: number | SQL, paths: string[], now: string) {
  const list = JSON.stringify(paths);
  return [
    db
      .delete(workflowTriggers)
      .where(and(eq(workflowTriggers.workflowId, workflowId), sql`${workflowTriggers.triggerPath} NOT IN (SELECT value FROM json_each(${list}))`)),
    // Selected in the table's column order (org_id, trigger_path, workflow_id, claimed_at). `WHERE true` is SQLite's
    // required disambiguation of INSERT ... SELECT followed by ON CONFLICT.
    db.insert(workflowTriggers).select(sql`SELECT ${orgId}, value, ${workflowId}, ${now} FROM json_each(${list}) WHERE true`).onConflictDoNothing(),
  ];
}

type Batch = [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]];

export type NewWorkflow = {
  name: string;
  definition: Json;
  templateContextVariables?: Json;
  callDispositionCodes?: Json;
  workflowConfigurations?: Json;
};

/** Creates the agent, its version 1 and its trigger rows in one transaction, recorded as `actor`'s change. */
export async function createWorkflow(db: Db, orgId: number, input: NewWorkflow, actor: Actor): Promise<StoredWorkflow> {
  const uuid = crypto.randomUUID();
  const now = isoNow();
  // The new row's id isn't known inside the batch, so later statements find it by its UUID.
  const workflowId = sql`(SELECT id FROM workflows WHERE uuid = ${uuid})`;
  await db.batch([
    db.insert(workflows).values({
      orgId,
      uuid,
      name: input.name,
      status: "active",
      versionNumber: 1,
      templateContextVariables: input.templateContextVariables ?? {},
      callDispositionCodes: input.callDispositionCodes ?? { disposition_codes: [] },
      workflowConfigurations: input.workflowConfigurations ?? {},
      createdAt: now,
      updatedAt: now,
    }),
    auditStatement(db, actor, { action: "create", resourceType: "workflow", resourceId: workflowId, summary: { name: input.name, workflow_uuid: uuid } }),
    db.insert(workflowDefinitions).values({ workflowId, versionNumber: 1, definition: input.definition, createdAt: now }),
    db
      .update(workflows)
      .set({ currentDefinitionId: sql`(SELECT id FROM ${workflowDefinitions} WHERE workflow_id = ${workflowId} AND version_number = 1)` })
      .where(eq(workflows.uuid, uuid)),
    ...syncTriggers(db, orgId, workflowId, triggerPathsOf(input.definition), now),
  ] as Batch);
  const row = await withDefinition(db).where(eq(workflows.uuid, uuid)).get();
  return toStored(row!);
}

export type WorkflowPatch = Partial<NewWorkflow>;

const snakeCase = (field: string) => (field === "definition" ? "workflow_definition" : field.replace(/[A-Z]/g, (ch) => `_${ch.toLowerCase()}`));

/**
 * Applies a partial update. A definition that differs from the current one becomes a new version (number + 1, new
 * current_definition_id); earlier versions stay. Two updates racing for the same version number: one gets a 409.
 */
export async function updateWorkflow(db: Db, orgId: number, id: number, patch: WorkflowPatch, actor: Actor): Promise<StoredWorkflow> {
  const current = await getWorkflow(db, orgId, id);
  if (!current) throw notFound("Workflow");
  const now = isoNow();
  const fields: SQLiteUpdateSetSource<typeof workflows> = { updatedAt: now };
  if (patch.name !== undefined) fields.name = patch.name;
  if (patch.templateContextVariables !== undefined) fields.templateContextVariables = patch.templateContextVariables;
  if (patch.callDispositionCodes !== undefined) fields.callDispositionCodes = patch.callDispositionCodes;
  if (patch.workflowConfigurations !== undefined) fields.workflowConfigurations = patch.workflowConfigurations;

  const changed = patch.definition !== undefined && canonicalJson(patch.definition) !== canonicalJson(current.definition);
  const scope = and(eq(workflows.id, id), eq(workflows.orgId, orgId));
  const sent = (["name", "definition", "templateContextVariables", "callDispositionCodes", "workflowConfigurations"] as const).filter(
    (k) => patch[k] !== undefined,
  );
  const audited = () =>
    auditStatement(db, actor, {
      action: "update",
      resourceType: "workflow",
      resourceId: id,
      summary: {
        fields: sent.map(snakeCase),
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(changed ? { version_number: current.versionNumber + 1 } : {}),
      },
    });
  if (!changed) {
    await db.batch([db.update(workflows).set(fields).where(scope), audited()]);
  } else {
    const next = current.versionNumber + 1;
    fields.versionNumber = next;
    fields.currentDefinitionId = sql`(SELECT id FROM ${workflowDefinitions} WHERE workflow_id = ${id} AND version_number = ${next})`;
    try {
      await db.batch([
        db.insert(workflowDefinitions).values({ workflowId: id, versionNumber: next, definition: patch.definition!, createdAt: now }),
        db.update(workflows).set(fields).where(scope),
        audited(),
        ...syncTriggers(db, orgId, id, triggerPathsOf(patch.definition), now),
      ] as Batch);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict("The workflow was changed by another request; fetch it and try again");
      throw err;
    }
  }
  return (await getWorkflow(db, orgId, id))!;
}

export async function setWorkflowStatus(db: Db, orgId: number, id: number, status: WorkflowStatus, actor: Actor): Promise<StoredWorkflow> {
  const [[row]] = await db.batch([
    db
      .update(workflows)
      .set({ status, updatedAt: isoNow() })
      .where(and(eq(workflows.id, id), eq(workflows.orgId, orgId)))
      .returning({ id: workflows.id }),
    auditStatement(db, actor, { action: "set_status", resourceType: "workflow", resourceId: id, summary: { status } }),
  ]);
  if (!row) throw notFound("Workflow");
  return (await getWorkflow(db, orgId, id))!;
}

export type StoredVersion = {
  id: number;
  workflowId: number;
  versionNumber: number;
  definition: unknown;
  createdAt: string;
};

const versionColumns = {
  id: workflowDefinitions.id,
  workflowId: workflowDefinitions.workflowId,
  versionNumber: workflowDefinitions.versionNumber,
  definitionText,
  createdAt: workflowDefinitions.createdAt,
};
const toVersion = ({ definitionText: text, ...r }: { definitionText: string | null } & Omit<StoredVersion, "definition">): StoredVersion => ({
  ...r,
  definition: parseStoredDefinition(text),
});

/** Versions of an agent the caller has already checked belongs to the organization; newest first, a page and one more (toPage). */
export async function listVersions(db: Db, workflowId: number, opts: { limit: number; before: number | null }): Promise<StoredVersion[]> {
  const query = db.select(versionColumns).from(workflowDefinitions).$dynamic();
  const rows = await newestFirst(query, workflowDefinitions.id, opts.before, opts.limit, eq(workflowDefinitions.workflowId, workflowId)).all();
  return rows.map(toVersion);
}

export async function getVersion(db: Db, workflowId: number, versionNumber: number): Promise<StoredVersion | null> {
  const row = await db
    .select(versionColumns)
    .from(workflowDefinitions)
    .where(and(eq(workflowDefinitions.workflowId, workflowId), eq(workflowDefinitions.versionNumber, versionNumber)))
    .get();
  return row ? toVersion(row) : null;
}

// ---- Lookups for campaigns and calls ----

/** The agent with this Agent UUID in the organization, whatever its status; null when there is none. */
export async function findWorkflowByUuid(db: Db, orgId: number, uuid: string): Promise<StoredWorkflow | null> {
  if (!UUID.test(uuid)) return null;
  const row = await withDefinition(db)
    .where(and(eq(workflows.uuid, uuid.toLowerCase()), eq(workflows.orgId, orgId)))
    .get();
  return row ? toStored(row) : null;
}

/** The agent owning this API Trigger path in the organization (the first to claim it), whatever its status. */
export async function findWorkflowByTriggerPath(db: Db, orgId: number, path: string): Promise<StoredWorkflow | null> {
  const owner = (await triggerPathOwners(db, orgId, [path])).get(path);
  return owner === undefined ? null : getWorkflow(db, orgId, owner);
}

/** An agent that may take calls and campaigns: `definitionId` is the version a run should record. */
export type UsableWorkflow = StoredWorkflow & { definitionId: number | null };

/** How many of an invalid definition's problems the 409 message spells out (the `errors` list has them all). */
const SHOWN_PROBLEMS = 3;

/** 409 for an agent whose definition fails validation: the message names the problems, `errors` lists them all. */
export function invalidDefinition(workflowId: number, errors: DefinitionError[]): ApiErrorWithFields {
  const shown = errors.slice(0, SHOWN_PROBLEMS).map((e) => e.message);
  const more = errors.length > SHOWN_PROBLEMS ? `; and ${errors.length - SHOWN_PROBLEMS} more` : "";
  return new ApiErrorWithFields(
    409,
    `Workflow definition is invalid: ${shown.join("; ")}${more}. Fix the agent (POST /workflow/${workflowId}/validate lists every problem) before it takes calls`,
    { errors },
  );
}

// Drafts may be saved invalid, but only a valid definition takes calls or campaigns. The
// check is structural only: a trigger path another agent claimed first does not stop calls by Agent UUID.
function usable(row: StoredWorkflow | null): UsableWorkflow {
  if (!row) throw notFound("Workflow");
  if (row.status === "archived") throw conflict("Workflow is archived");
  const check = validateDefinition(row.definition);
  if (!check.is_valid) throw invalidDefinition(row.id, check.errors);
  return { ...row, definitionId: row.currentDefinitionId };
}

/** 404 `Workflow not found` (missing or another organization's), 409 `Workflow is archived` or an invalid definition; else the agent. */
export async function loadUsableWorkflow(db: Db, orgId: number, workflowId: number): Promise<UsableWorkflow> {
  return usable(await getWorkflow(db, orgId, workflowId));
}

/**
 * Same checks for the public call endpoints: `value` is an Agent UUID, or with `allowTriggerPath` also the trigger
 * path of an API Trigger node (`POST /public/agent/{uuid}` takes both; `/public/agent/workflow/{uuid}` only UUIDs).
 */
/**
 * The trigger URL's form (`POST /public/trigger/{trigger_path}`): only the trigger path of an API Trigger node, never
 * an Agent UUID (the interface keeps the two apart), with the same 404/409 checks.
 */
export async function loadUsableWorkflowByTrigger(db: Db, orgId: number, path: string): Promise<UsableWorkflow> {
  return usable(await findWorkflowByTriggerPath(db, orgId, path));
}

export async function loadUsableWorkflowByUuid(db: Db, orgId: number, value: string, opts: { allowTriggerPath?: boolean } = {}): Promise<UsableWorkflow> {
  let row = await findWorkflowByUuid(db, orgId, value);
  if (!row && opts.allowTriggerPath) row = await findWorkflowByTriggerPath(db, orgId, value);
  return usable(row);
}
