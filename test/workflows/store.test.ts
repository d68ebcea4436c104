// The lookups campaigns and calls use: the archive rule (409), isolation (404), UUIDs and trigger paths.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/lib/errors";
import { getDb } from "../../src/lib/db";
import {
  findWorkflowByTriggerPath,
  findWorkflowByUuid,
  loadUsableWorkflow,
  loadUsableWorkflowByUuid,
  startGreeting,
  templateVariables,
} from "../../src/workflows";
import { call, createOrg, type Org } from "../helpers";
import { validDefinition } from "./fixtures";

const db = () => getDb(env);

async function createAgent(o: Org, def = validDefinition()) {
  const res = await call("POST", "/api/v1/workflow/create", { key: o.key, body: { name: "agent", workflow_definition: def } });
  expect(res.status, res.text).toBe(200);
  return res.json;
}

const setStatus = (o: Org, id: number, status: string) => call("PUT", `/api/v1/workflow/${id}/status`, { key: o.key, body: { status } });

async function rejection(p: Promise<unknown>) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  const { status, detail } = err as ApiError;
  return { status, detail };
}

describe("loadUsableWorkflow", () => {
  it("returns the agent with its current definition and version id", async () => {
    const o = await createOrg();
    const w = await createAgent(o);
    const def = validDefinition();
    def.nodes[0].data.greeting = "Hi {{ nickname }}";
    const updated = (await call("PUT", `/api/v1/workflow/${w.id}`, { key: o.key, body: { workflow_definition: def } })).json;
    const got = await loadUsableWorkflow(db(), o.id, w.id);
    expect(got).toMatchObject({ id: w.id, uuid: w.workflow_uuid, orgId: o.id, status: "active", versionNumber: 2 });
    expect(got.definitionId).toBe(updated.current_definition_id);
    expect(got.definition).toEqual(def);
    expect(startGreeting(got.definition)).toBe("Hi {{ nickname }}");
    expect(templateVariables(got.definition)).toEqual(["first_name", "topic", "nickname", "company"]);
  });

  it("archive → 409, restore → usable again", async () => {
    const o = await createOrg();
    const w = await createAgent(o);
    expect((await setStatus(o, w.id, "archived")).status).toBe(200);
    expect(await rejection(loadUsableWorkflow(db(), o.id, w.id))).toEqual({ status: 409, detail: "Workflow is archived" });
    expect(await rejection(loadUsableWorkflowByUuid(db(), o.id, w.workflow_uuid))).toEqual({ status: 409, detail: "Workflow is archived" });
    // Archived agents are still found (history, runs) by the plain lookups.
    expect((await findWorkflowByUuid(db(), o.id, w.workflow_uuid))?.status).toBe("archived");
    expect((await setStatus(o, w.id, "active")).status).toBe(200);
    expect((await loadUsableWorkflow(db(), o.id, w.id)).status).toBe("active");
  });

  it("404 for an unknown id or another organization's agent", async () => {
    const o = await createOrg();
    const stranger = await createOrg();
    const w = await createAgent(o);
    expect(await rejection(loadUsableWorkflow(db(), stranger.id, w.id))).toEqual({ status: 404, detail: "Workflow not found" });
    expect(await rejection(loadUsableWorkflow(db(), o.id, 987654321))).toEqual({ status: 404, detail: "Workflow not found" });
    expect(await rejection(loadUsableWorkflowByUuid(db(), stranger.id, w.workflow_uuid))).toEqual({ status: 404, detail: "Workflow not found" });
    expect(await findWorkflowByUuid(db(), stranger.id, w.workflow_uuid)).toBeNull();
  });
});

describe("findWorkflowByUuid / findWorkflowByTriggerPath", () => {
  it("finds by UUID (any case) and ignores non-UUIDs", async () => {
    const o = await createOrg();
    const w = await createAgent(o);
    expect((await findWorkflowByUuid(db(), o.id, w.workflow_uuid))?.id).toBe(w.id);
    expect((await findWorkflowByUuid(db(), o.id, w.workflow_uuid.toUpperCase()))?.id).toBe(w.id);
    expect(await findWorkflowByUuid(db(), o.id, "not-a-uuid")).toBeNull();
    expect(await findWorkflowByUuid(db(), o.id, crypto.randomUUID())).toBeNull();
  });

  it("resolves a trigger path to the agent that claimed it first, within the organization", async () => {
    const o = await createOrg();
    const stranger = await createOrg();
    const def = validDefinition();
    const path = def.nodes.find((n) => n.type === "apiTrigger").data.trigger_path;
    const first = await createAgent(o, def);
    const second = await createAgent(o, def);
    expect((await findWorkflowByTriggerPath(db(), o.id, path))?.id).toBe(first.id);
    expect(await findWorkflowByTriggerPath(db(), stranger.id, path)).toBeNull();
    expect(await findWorkflowByTriggerPath(db(), o.id, "no-such-path")).toBeNull();

    // The public endpoint form: a trigger path only where allowed.
    expect((await loadUsableWorkflowByUuid(db(), o.id, path, { allowTriggerPath: true })).id).toBe(first.id);
    expect(await rejection(loadUsableWorkflowByUuid(db(), o.id, path))).toEqual({ status: 404, detail: "Workflow not found" });

    // Archiving keeps the path with its owner (it answers 409, not another agent).
    await setStatus(o, first.id, "archived");
    expect(await rejection(loadUsableWorkflowByUuid(db(), o.id, path, { allowTriggerPath: true }))).toEqual({ status: 409, detail: "Workflow is archived" });

    // Dropping the path from the owner's definition hands it to the next claimer.
    await call("PUT", `/api/v1/workflow/${first.id}`, { key: o.key, body: { workflow_definition: validDefinition() } });
    expect((await findWorkflowByTriggerPath(db(), o.id, path))?.id).toBe(second.id);
  });

  it("keeps the trigger table equal to the current definition's paths", async () => {
    const o = await createOrg();
    const def = validDefinition();
    def.nodes.push({ id: "t2", type: "apiTrigger", data: { trigger_path: "second-path" } });
    const w = await createAgent(o, def);
    const paths = async () =>
      (
        await env.DB.prepare("SELECT trigger_path FROM workflow_triggers WHERE workflow_id = ? ORDER BY trigger_path")
          .bind(w.id)
          .all<{ trigger_path: string }>()
      ).results.map((r) => r.trigger_path);
    expect(await paths()).toEqual([def.nodes[6].data.trigger_path, "second-path"].sort());
    const next = validDefinition();
    next.nodes[6].data.trigger_path = "second-path";
    await call("PUT", `/api/v1/workflow/${w.id}`, { key: o.key, body: { workflow_definition: next } });
    expect(await paths()).toEqual(["second-path"]);
    // A rename alone leaves them alone.
    await call("PUT", `/api/v1/workflow/${w.id}`, { key: o.key, body: { name: "renamed" } });
    expect(await paths()).toEqual(["second-path"]);
  });
});
