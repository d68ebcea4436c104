// The agent operations over HTTP: create, list, fetch, versions, archive/restore, validate, isolation, bad input.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createOrg, type Org } from "../helpers";
import { minimalDefinition, validDefinition } from "./fixtures";

let org: Org;
let other: Org;

beforeAll(async () => {
  org = await createOrg();
  other = await createOrg();
});

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function createAgent(o: Org, body: Record<string, unknown> = {}) {
  const res = await call("POST", "/api/v1/workflow/create", {
    key: o.key,
    body: { name: `agent-${crypto.randomUUID().slice(0, 8)}`, workflow_definition: validDefinition(), ...body },
  });
  expect(res.status, res.text).toBe(200);
  return res.json;
}

async function insertRun(o: Org, workflow: { id: number; workflow_uuid: string }) {
  await env.DB.prepare("INSERT INTO workflow_runs (org_id, name, workflow_id, workflow_uuid, phone_number) VALUES (?, ?, ?, ?, '+14155550100')")
    .bind(o.id, `WR-${crypto.randomUUID()}`, workflow.id, workflow.workflow_uuid)
    .run();
}

describe("POST /api/v1/workflow/create", () => {
  it("returns the agent with every field of the agent object", async () => {
    const def = validDefinition();
    const res = await call("POST", "/api/v1/workflow/create", {
      key: org.key,
      body: {
        name: "  Sales agent  ",
        workflow_definition: def,
        template_context_variables: { topic: "solar" },
        call_disposition_codes: { disposition_codes: ["SALE", "NO_SALE"] },
        workflow_configurations: { voice: "alloy", max_call_duration: 600 },
      },
    });
    expect(res.status, res.text).toBe(200);
    const w = res.json;
    expect(w).toEqual({
      id: expect.any(Number),
      name: "Sales agent",
      status: "active",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      updated_at: expect.any(String),
      workflow_definition: def,
      current_definition_id: expect.any(Number),
      template_context_variables: { topic: "solar" },
      call_disposition_codes: { disposition_codes: ["SALE", "NO_SALE"] },
      total_runs: 0,
      workflow_configurations: { voice: "alloy", max_call_duration: 600 },
      version_number: 1,
      version_status: "published",
      workflow_uuid: expect.stringMatching(UUID_V4),
    });
    expect(w).not.toHaveProperty("unknown_field");
    const fetched = await call("GET", `/api/v1/workflow/fetch/${w.id}`, { key: org.key });
    expect(fetched.status).toBe(200);
    expect(fetched.json).toEqual(w);
  });

  it("fills defaults and keeps the editor's own fields inside the definition", async () => {
    const def: any = minimalDefinition();
    def.nodes[0].position = { x: 10, y: 20 };
    def.viewport = { zoom: 1 };
    delete def.edges;
    const w = await createAgent(org, { workflow_definition: def });
    expect(w.template_context_variables).toEqual({});
    expect(w.workflow_configurations).toEqual({});
    expect(w.call_disposition_codes).toEqual({ disposition_codes: [] });
    expect(w.workflow_definition.nodes[0].position).toEqual({ x: 10, y: 20 });
    expect(w.workflow_definition.viewport).toEqual({ zoom: 1 });
    expect(w.workflow_definition.edges).toEqual([]);
  });

  it("gives each agent its own UUID", async () => {
    const a = await createAgent(org);
    const b = await createAgent(org);
    expect(a.workflow_uuid).not.toBe(b.workflow_uuid);
    expect(a.id).not.toBe(b.id);
  });

  it("saves a structurally broken definition (drafts) and validate reports it", async () => {
    const w = await createAgent(org, {
      workflow_definition: { nodes: [{ id: "a", type: "agentNode", data: {} }], edges: [{ id: "e", source: "a", target: "b" }] },
    });
    const v = await call("POST", `/api/v1/workflow/${w.id}/validate`, { key: org.key });
    expect(v.status).toBe(200);
    expect(v.json.is_valid).toBe(false);
    expect(v.json.errors.map((e: any) => `${e.kind}:${e.id}:${e.field}`).sort()).toEqual(
      ["edge:e:target", "node:a:data.prompt", "workflow:null:nodes", "workflow:null:nodes"].sort(),
    );
  });

  describe("bad input is a 422 with loc", () => {
    const post = (body: unknown) => call("POST", "/api/v1/workflow/create", { key: org.key, body });
    const locs = (res: { json: any }) => res.json.detail.map((d: any) => d.loc);

    it("a definition that is not an object", async () => {
      for (const bad of ["nodes", [1], 5, null]) {
        const res = await post({ name: "x", workflow_definition: bad });
        expect(res.status).toBe(422);
        expect(locs(res)).toEqual([["body", "workflow_definition"]]);
      }
    });

    it("nodes that are not a list", async () => {
      const res = await post({ name: "x", workflow_definition: { nodes: { a: 1 }, edges: [] } });
      expect(res.status).toBe(422);
      expect(res.json.detail).toEqual([expect.objectContaining({ loc: ["body", "workflow_definition", "nodes"], type: "list_type" })]);
    });

    it("an unknown node type", async () => {
      const def = validDefinition();
      def.nodes[1].type = "teleport";
      const res = await post({ name: "x", workflow_definition: def });
      expect(res.status).toBe(422);
      expect(res.json.detail).toEqual([expect.objectContaining({ loc: ["body", "workflow_definition", "nodes", 1, "type"], type: "enum", input: "teleport" })]);
    });

    it("a node without id or type, and an edge without source", async () => {
      const def: any = validDefinition();
      delete def.nodes[2].id;
      delete def.nodes[3].type;
      delete def.edges[0].source;
      const res = await post({ name: "x", workflow_definition: def });
      expect(res.status).toBe(422);
      expect(locs(res)).toEqual(
        expect.arrayContaining([
          ["body", "workflow_definition", "nodes", 2, "id"],
          ["body", "workflow_definition", "nodes", 3, "type"],
          ["body", "workflow_definition", "edges", 0, "source"],
        ]),
      );
      expect(res.json.detail.every((d: any) => d.type === "missing" && d.msg === "Field required")).toBe(true);
    });

    it("a prompt that is not text", async () => {
      const def = validDefinition();
      def.nodes[1].data.prompt = 7;
      const res = await post({ name: "x", workflow_definition: def });
      expect(res.status).toBe(422);
      expect(locs(res)).toEqual([["body", "workflow_definition", "nodes", 1, "data", "prompt"]]);
    });

    it("a 300-character name, an empty name and no name", async () => {
      const long = await post({ name: "n".repeat(300), workflow_definition: validDefinition() });
      expect(long.status).toBe(422);
      expect(long.json.detail).toEqual([expect.objectContaining({ loc: ["body", "name"], type: "string_too_long", ctx: { max_length: 255 } })]);
      const blank = await post({ name: "   ", workflow_definition: validDefinition() });
      expect(blank.status).toBe(422);
      expect(locs(blank)).toEqual([["body", "name"]]);
      const missing = await post({ workflow_definition: validDefinition() });
      expect(missing.json.detail).toEqual([expect.objectContaining({ loc: ["body", "name"], type: "missing", msg: "Field required" })]);
      const exact = await post({ name: "n".repeat(255), workflow_definition: validDefinition() });
      expect(exact.status).toBe(200);
    });

    it("a definition with no nodes at all", async () => {
      const res = await post({ name: "x", workflow_definition: { nodes: [], edges: [] } });
      expect(res.status).toBe(422);
      expect(locs(res)).toEqual([["body", "workflow_definition", "nodes"]]);
      const none = await post({ name: "x", workflow_definition: {} });
      expect(none.status).toBe(422);
      expect(none.json.detail).toEqual([expect.objectContaining({ loc: ["body", "workflow_definition", "nodes"], type: "missing" })]);
    });

    it("malformed JSON and wrong types of the other objects", async () => {
      const raw = await call("POST", "/api/v1/workflow/create", { key: org.key, raw: "{not json" });
      expect(raw.status).toBe(422);
      expect(raw.json.detail[0].type).toBe("json_invalid");
      const codes = await post({ name: "x", workflow_definition: validDefinition(), call_disposition_codes: { disposition_codes: "SALE" } });
      expect(codes.status).toBe(422);
      expect(locs(codes)).toEqual([["body", "call_disposition_codes", "disposition_codes"]]);
      const vars = await post({ name: "x", workflow_definition: validDefinition(), template_context_variables: ["a"] });
      expect(vars.status).toBe(422);
      expect(locs(vars)).toEqual([["body", "template_context_variables"]]);
    });

    it("a definition too large to store", async () => {
      const def = validDefinition();
      // Each prompt within its own cap (32,000 characters); together past the definition's 512 KB.
      for (let i = 0; i < 20; i++) def.nodes.push({ id: `big-${i}`, type: "agentNode", data: { prompt: "x".repeat(31_000) } });
      const res = await post({ name: "x", workflow_definition: def });
      expect(res.status).toBe(422);
      expect(locs(res)).toEqual([["body", "workflow_definition"]]);
    });
  });

  it("needs a key", async () => {
    const res = await call("POST", "/api/v1/workflow/create", { body: { name: "x", workflow_definition: validDefinition() } });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ detail: "Not authenticated" });
  });
});

describe("GET /api/v1/workflow/fetch", () => {
  it("pages newest first with the contract's cursor", async () => {
    const o = await createOrg();
    const made = [await createAgent(o), await createAgent(o), await createAgent(o)];
    const first = await call("GET", "/api/v1/workflow/fetch?limit=2", { key: o.key });
    expect(first.status).toBe(200);
    expect(first.json.items.map((w: any) => w.id)).toEqual([made[2].id, made[1].id]);
    expect(first.json.next_cursor).toEqual(expect.any(String));
    const second = await call("GET", `/api/v1/workflow/fetch?limit=2&cursor=${first.json.next_cursor}`, { key: o.key });
    expect(second.json.items.map((w: any) => w.id)).toEqual([made[0].id]);
    expect(second.json.next_cursor).toBeNull();
    // Items are full agent objects.
    expect(second.json.items[0]).toEqual(made[0]);
  });

  it("filters by status and rejects bad paging", async () => {
    const o = await createOrg();
    const a = await createAgent(o);
    const b = await createAgent(o);
    await call("PUT", `/api/v1/workflow/${a.id}/status`, { key: o.key, body: { status: "archived" } });
    const archived = await call("GET", "/api/v1/workflow/fetch?status=archived", { key: o.key });
    expect(archived.json.items.map((w: any) => w.id)).toEqual([a.id]);
    const active = await call("GET", "/api/v1/workflow/fetch?status=active", { key: o.key });
    expect(active.json.items.map((w: any) => w.id)).toEqual([b.id]);
    const all = await call("GET", "/api/v1/workflow/fetch", { key: o.key });
    expect(all.json.items.map((w: any) => w.id)).toEqual([b.id, a.id]);
    for (const q of ["limit=0", "limit=101", "cursor=garbage", "status=deleted"]) {
      const res = await call("GET", `/api/v1/workflow/fetch?${q}`, { key: o.key });
      expect(res.status, q).toBe(422);
      expect(res.json.detail[0].loc[0]).toBe("query");
    }
  });

  it("counts total_runs from the call records", async () => {
    const o = await createOrg();
    const a = await createAgent(o);
    const b = await createAgent(o);
    await insertRun(o, a);
    await insertRun(o, a);
    await insertRun(o, b);
    const one = await call("GET", `/api/v1/workflow/fetch/${a.id}`, { key: o.key });
    expect(one.json.total_runs).toBe(2);
    const list = await call("GET", "/api/v1/workflow/fetch", { key: o.key });
    expect(Object.fromEntries(list.json.items.map((w: any) => [w.id, w.total_runs]))).toEqual({ [a.id]: 2, [b.id]: 1 });
  });
});

describe("organization isolation", () => {
  it("another organization's agent is 404 everywhere and absent from lists", async () => {
    const w = await createAgent(org);
    const calls: [string, string, unknown?][] = [
      ["GET", `/api/v1/workflow/fetch/${w.id}`],
      ["PUT", `/api/v1/workflow/${w.id}`, { name: "stolen" }],
      ["PUT", `/api/v1/workflow/${w.id}/status`, { status: "archived" }],
      ["POST", `/api/v1/workflow/${w.id}/validate`],
      ["GET", `/api/v1/workflow/${w.id}/versions`],
      ["GET", `/api/v1/workflow/${w.id}/versions/1`],
    ];
    for (const [method, path, body] of calls) {
      const res = await call(method, path, { key: other.key, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json).toEqual({ detail: "Workflow not found" });
    }
    const list = await call("GET", "/api/v1/workflow/fetch?limit=100", { key: other.key });
    expect(list.json.items.map((x: any) => x.id)).not.toContain(w.id);
    // Nothing changed for the owner.
    const mine = await call("GET", `/api/v1/workflow/fetch/${w.id}`, { key: org.key });
    expect(mine.json).toMatchObject({ name: w.name, status: "active", version_number: 1 });
  });

  it("unknown and malformed ids", async () => {
    expect((await call("GET", "/api/v1/workflow/fetch/999999999", { key: org.key })).status).toBe(404);
    const bad = await call("GET", "/api/v1/workflow/fetch/abc", { key: org.key });
    expect(bad.status).toBe(404);
    expect(bad.json).toEqual({ detail: "Workflow not found" });
  });
});

describe("PUT /api/v1/workflow/{id}: versions", () => {
  it("keeps every version across three updates", async () => {
    const w = await createAgent(org);
    const defs = [w.workflow_definition];
    const defIds = [w.current_definition_id];
    for (let i = 1; i <= 3; i++) {
      const def = validDefinition();
      def.nodes[1].data.prompt = `Version ${i + 1} prompt`;
      const res = await call("PUT", `/api/v1/workflow/${w.id}`, { key: org.key, body: { workflow_definition: def } });
      expect(res.status, res.text).toBe(200);
      expect(res.json.version_number).toBe(i + 1);
      expect(res.json.workflow_definition).toEqual(def);
      expect(defIds).not.toContain(res.json.current_definition_id);
      expect(res.json.workflow_uuid).toBe(w.workflow_uuid);
      expect(res.json.id).toBe(w.id);
      defs.push(def);
      defIds.push(res.json.current_definition_id);
    }

    const list = await call("GET", `/api/v1/workflow/${w.id}/versions`, { key: org.key });
    expect(list.status).toBe(200);
    expect(list.json.next_cursor).toBeNull();
    expect(list.json.items.map((v: any) => [v.version_number, v.id, v.version_status])).toEqual([
      [4, defIds[3], "published"],
      [3, defIds[2], "superseded"],
      [2, defIds[1], "superseded"],
      [1, defIds[0], "superseded"],
    ]);
    for (const v of list.json.items) expect(v.workflow_definition).toEqual(defs[v.version_number - 1]);

    const paged = await call("GET", `/api/v1/workflow/${w.id}/versions?limit=3`, { key: org.key });
    expect(paged.json.items).toHaveLength(3);
    const rest = await call("GET", `/api/v1/workflow/${w.id}/versions?limit=3&cursor=${paged.json.next_cursor}`, { key: org.key });
    expect(rest.json.items.map((v: any) => v.version_number)).toEqual([1]);

    const v2 = await call("GET", `/api/v1/workflow/${w.id}/versions/2`, { key: org.key });
    expect(v2.status).toBe(200);
    expect(v2.json).toEqual({
      id: defIds[1],
      workflow_id: w.id,
      version_number: 2,
      version_status: "superseded",
      workflow_definition: defs[1],
      created_at: expect.any(String),
    });
    const missing = await call("GET", `/api/v1/workflow/${w.id}/versions/9`, { key: org.key });
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ detail: "Workflow version not found" });
  });

  it("an unchanged definition (keys in another order) or other fields alone make no new version", async () => {
    const w = await createAgent(org);
    const reordered = JSON.parse(
      JSON.stringify(w.workflow_definition, (_k, v) => (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v)),
    );
    const same = await call("PUT", `/api/v1/workflow/${w.id}`, { key: org.key, body: { workflow_definition: reordered, name: "Renamed" } });
    expect(same.status).toBe(200);
    expect(same.json).toMatchObject({ name: "Renamed", version_number: 1, current_definition_id: w.current_definition_id });

    const meta = await call("PUT", `/api/v1/workflow/${w.id}`, {
      key: org.key,
      body: {
        template_context_variables: { x: "1" },
        call_disposition_codes: { disposition_codes: ["A"] },
        workflow_configurations: { llm: "m" },
      },
    });
    expect(meta.json).toMatchObject({
      name: "Renamed",
      version_number: 1,
      template_context_variables: { x: "1" },
      call_disposition_codes: { disposition_codes: ["A"] },
      workflow_configurations: { llm: "m" },
      workflow_definition: w.workflow_definition,
    });
    const versions = await call("GET", `/api/v1/workflow/${w.id}/versions`, { key: org.key });
    expect(versions.json.items).toHaveLength(1);

    const empty = await call("PUT", `/api/v1/workflow/${w.id}`, { key: org.key, body: {} });
    expect(empty.status).toBe(200);
    expect(empty.json.version_number).toBe(1);
  });

  it("rejects bad updates with 422 and changes nothing", async () => {
    const w = await createAgent(org);
    for (const body of [{ name: "n".repeat(300) }, { workflow_definition: { nodes: "x" } }, { workflow_definition: { nodes: [{ id: "a", type: "nope" }] } }]) {
      const res = await call("PUT", `/api/v1/workflow/${w.id}`, { key: org.key, body });
      expect(res.status).toBe(422);
      expect(res.json.detail[0].loc[0]).toBe("body");
    }
    const after = await call("GET", `/api/v1/workflow/fetch/${w.id}`, { key: org.key });
    expect(after.json).toEqual(w);
  });

  it("an emptied draft may be saved by update, and validate reports it", async () => {
    const w = await createAgent(org);
    const res = await call("PUT", `/api/v1/workflow/${w.id}`, { key: org.key, body: { workflow_definition: { nodes: [], edges: [] } } });
    expect(res.status).toBe(200);
    expect(res.json.version_number).toBe(2);
    const v = await call("POST", `/api/v1/workflow/${w.id}/validate`, { key: org.key });
    expect(v.json.is_valid).toBe(false);
  });

  it("concurrent updates never lose a version nor give a 500", async () => {
    const w = await createAgent(org);
    const puts = await Promise.all(
      [1, 2, 3].map((i) => {
        const def = validDefinition();
        def.nodes[1].data.prompt = `racer ${i}`;
        return call("PUT", `/api/v1/workflow/${w.id}`, { key: org.key, body: { workflow_definition: def } });
      }),
    );
    for (const p of puts) expect([200, 409]).toContain(p.status);
    const ok = puts.filter((p) => p.status === 200).length;
    expect(ok).toBeGreaterThan(0);
    const versions = await call("GET", `/api/v1/workflow/${w.id}/versions`, { key: org.key });
    expect(versions.json.items).toHaveLength(1 + ok);
    const now = await call("GET", `/api/v1/workflow/fetch/${w.id}`, { key: org.key });
    expect(now.json.version_number).toBe(1 + ok);
    expect(now.json.current_definition_id).toBe(versions.json.items[0].id);
  });
});

describe("PUT /api/v1/workflow/{id}/status", () => {
  it("archives and restores, keeping definition and history", async () => {
    const w = await createAgent(org);
    await insertRun(org, w);
    const archived = await call("PUT", `/api/v1/workflow/${w.id}/status`, { key: org.key, body: { status: "archived" } });
    expect(archived.status).toBe(200);
    expect(archived.json).toMatchObject({ status: "archived", workflow_definition: w.workflow_definition, total_runs: 1, version_number: 1 });
    expect((await call("GET", `/api/v1/workflow/fetch/${w.id}`, { key: org.key })).json.status).toBe("archived");
    // Archiving twice is harmless.
    expect((await call("PUT", `/api/v1/workflow/${w.id}/status`, { key: org.key, body: { status: "archived" } })).status).toBe(200);
    const restored = await call("PUT", `/api/v1/workflow/${w.id}/status`, { key: org.key, body: { status: "active" } });
    expect(restored.json).toMatchObject({ status: "active", total_runs: 1, workflow_uuid: w.workflow_uuid });
  });

  it("rejects other statuses", async () => {
    const w = await createAgent(org);
    for (const [body, type] of [
      [{ status: "deleted" }, "enum"],
      [{}, "missing"],
      [{ status: 1 }, "string_type"],
    ] as const) {
      const res = await call("PUT", `/api/v1/workflow/${w.id}/status`, { key: org.key, body });
      expect(res.status).toBe(422);
      expect(res.json.detail).toEqual([expect.objectContaining({ loc: ["body", "status"], type })]);
    }
  });
});

describe("POST /api/v1/workflow/{id}/validate", () => {
  it("a valid agent", async () => {
    const w = await createAgent(org);
    const res = await call("POST", `/api/v1/workflow/${w.id}/validate`, { key: org.key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ is_valid: true, errors: [], warnings: [] });
  });

  it("warns about a greeting longer than a carrier speaks at once, naming each such carrier; the agent stays valid", async () => {
    const d = validDefinition();
    const greeting = "This is a long greeting sentence. ".repeat(60).trim(); // 2,039 characters
    d.nodes.find((n) => n.type === "startCall").data.greeting = greeting;
    const w = await createAgent(org, { workflow_definition: d });
    const res = await call("POST", `/api/v1/workflow/${w.id}/validate`, { key: org.key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      is_valid: true,
      errors: [],
      warnings: [{ kind: "node", id: "start", field: "data.greeting", message: expect.stringContaining("vonage (1,500)") }],
    });
    // Only the carriers whose limit it passes (Vonage's 1,500), not Telnyx's 3,000 or Twilio's 4,096.
    expect(res.json.warnings[0].message).toContain("2,039 characters");
    expect(res.json.warnings[0].message).not.toMatch(/telnyx|twilio/);
  });

  it("answers 200 whatever the stored definition holds", async () => {
    const w = await createAgent(org);
    for (const stored of ["not json at all", "null", "42", '"text"', "[1,2]", '{"nodes":5}', '{"nodes":[null,{"id":{}}],"edges":{"a":1}}']) {
      await env.DB.prepare("UPDATE workflow_definitions SET definition = ? WHERE id = ?").bind(stored, w.current_definition_id).run();
      const res = await call("POST", `/api/v1/workflow/${w.id}/validate`, { key: org.key });
      expect(res.status, stored).toBe(200);
      expect(res.json.is_valid).toBe(false);
      expect(res.json.errors.length).toBeGreaterThan(0);
      const fetched = await call("GET", `/api/v1/workflow/fetch/${w.id}`, { key: org.key });
      expect(fetched.status, stored).toBe(200);
    }
    // A fresh definition replaces the broken one as a new version.
    const fixed = await call("PUT", `/api/v1/workflow/${w.id}`, { key: org.key, body: { workflow_definition: validDefinition() } });
    expect(fixed.json.version_number).toBe(2);
    expect((await call("POST", `/api/v1/workflow/${w.id}/validate`, { key: org.key })).json.is_valid).toBe(true);
  });

  it("reports a trigger path another agent of the organization owns, and not across organizations", async () => {
    const path = `shared-${crypto.randomUUID().slice(0, 8)}`;
    const withPath = () => {
      const d = validDefinition();
      d.nodes.find((n) => n.type === "apiTrigger").data.trigger_path = path;
      return d;
    };
    const first = await createAgent(org, { workflow_definition: withPath() });
    const second = await createAgent(org, { workflow_definition: withPath() });
    const elsewhere = await createAgent(other, { workflow_definition: withPath() });
    const validate = (o: Org, id: number) => call("POST", `/api/v1/workflow/${id}/validate`, { key: o.key }).then((r) => r.json);

    expect(await validate(org, first.id)).toEqual({ is_valid: true, errors: [], warnings: [] });
    expect(await validate(other, elsewhere.id)).toEqual({ is_valid: true, errors: [], warnings: [] });
    expect(await validate(org, second.id)).toEqual({
      is_valid: false,
      errors: [{ kind: "node", id: "trigger", field: "data.trigger_path", message: expect.stringContaining(path) }],
      warnings: [],
    });

    // Re-saving the owner with its path keeps ownership; once it drops the path, the second agent owns it.
    const tweaked = withPath();
    tweaked.nodes[1].data.prompt = "changed";
    await call("PUT", `/api/v1/workflow/${first.id}`, { key: org.key, body: { workflow_definition: tweaked } });
    expect((await validate(org, second.id)).is_valid).toBe(false);
    await call("PUT", `/api/v1/workflow/${first.id}`, { key: org.key, body: { workflow_definition: validDefinition() } });
    expect(await validate(org, second.id)).toEqual({ is_valid: true, errors: [], warnings: [] });
  });
});

describe("OpenAPI document", () => {
  it("lists every agent operation", async () => {
    const doc = (await call("GET", "/api/v1/openapi.json")).json;
    expect(doc.paths["/api/v1/workflow/create"].post).toBeTruthy();
    expect(doc.paths["/api/v1/workflow/fetch"].get).toBeTruthy();
    expect(doc.paths["/api/v1/workflow/fetch/{workflow_id}"].get).toBeTruthy();
    expect(doc.paths["/api/v1/workflow/{workflow_id}"].put).toBeTruthy();
    expect(doc.paths["/api/v1/workflow/{workflow_id}/status"].put).toBeTruthy();
    expect(doc.paths["/api/v1/workflow/{workflow_id}/validate"].post).toBeTruthy();
    expect(doc.paths["/api/v1/workflow/{workflow_id}/versions"].get).toBeTruthy();
    expect(doc.paths["/api/v1/workflow/{workflow_id}/versions/{version_number}"].get).toBeTruthy();
  });
});
