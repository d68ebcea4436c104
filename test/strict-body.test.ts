// Strict request bodies: an unknown field is a 422 `extra_forbidden` located at the field, at any depth,
// while the free-form objects (initial_context, the agent definition, ...) stay open.
import { describe, expect, it } from "vitest";
import { zodIssuesToItems } from "../src/lib/errors";
import { z } from "@hono/zod-openapi";
import { call, createOrg, type Org } from "./helpers";
import { FIXTURES } from "./telephony/support";
import { createCampaign, goodCsv, upload, world } from "./campaigns/support";

const PROBE = "probe_unknown_field";

const extra = (loc: (string | number)[]) => expect.objectContaining({ loc, type: "extra_forbidden", msg: "Extra inputs are not permitted" });

type Schema = Record<string, any>;

/** Every request body of the document, as [operation, schema]. */
async function requestBodies() {
  const doc = (await call("GET", "/api/v1/openapi.json")).json;
  const out: { method: string; path: string; schema: Schema }[] = [];
  for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      const schema = op.requestBody?.content?.["application/json"]?.schema;
      if (schema) out.push({ method, path, schema });
    }
  }
  return { doc, bodies: out };
}

describe("zodIssuesToItems: unrecognized keys", () => {
  it("gives one located item per unknown key, with its input", () => {
    const schema = z.strictObject({ a: z.strictObject({ b: z.number() }) });
    const data = { a: { b: 1, c: 2, d: "x" }, e: true };
    const r = schema.safeParse(data);
    expect(r.success).toBe(false);
    const items = zodIssuesToItems(r.error!.issues, ["body"], data);
    expect(items).toEqual(
      expect.arrayContaining([
        { loc: ["body", "a", "c"], msg: "Extra inputs are not permitted", type: "extra_forbidden", input: 2 },
        { loc: ["body", "a", "d"], msg: "Extra inputs are not permitted", type: "extra_forbidden", input: "x" },
        { loc: ["body", "e"], msg: "Extra inputs are not permitted", type: "extra_forbidden", input: true },
      ]),
    );
    expect(items).toHaveLength(3);
  });
});

describe("every body-taking operation refuses an unknown field", () => {
  it("sweeps the OpenAPI document: each JSON body with an extra field is a 422 extra_forbidden at that field", async () => {
    const org = await createOrg();
    const { bodies } = await requestBodies();
    expect(bodies.length).toBeGreaterThanOrEqual(14);
    const failures: string[] = [];
    for (const { method, path, schema } of bodies) {
      // Path ids need only be well-formed: body validation answers before the handler looks anything up.
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => (/uuid/.test(name) ? crypto.randomUUID() : "1"));
      const res = await call(method.toUpperCase(), url, { key: org.key, body: { [PROBE]: 1 } });
      const hit =
        res.status === 422 &&
        Array.isArray(res.json?.detail) &&
        res.json.detail.some((d: any) => d.type === "extra_forbidden" && d.loc.join(".") === `body.${PROBE}`);
      if (!hit) failures.push(`${method.toUpperCase()} ${path} -> ${res.status} ${res.text.slice(0, 200)}`);
      expect(schema).toBeDefined();
    }
    expect(failures).toEqual([]);
  });

  it("the document says so too: every object in a request body is closed unless it is declared free-form", async () => {
    const { doc, bodies } = await requestBodies();
    const resolve = (s: Schema): Schema => (s.$ref ? resolve(doc.components.schemas[s.$ref.split("/").pop()]) : s);
    // Objects that are open on purpose: the agent definition keeps the editor's own keys (positions, labels), and an
    // agent's settings keep keys of their own beside `voice_agent` (which is closed, and checked below it).
    const OPEN = new Set(["WorkflowDefinition", "WorkflowDefinitionUpdate", "WorkflowNode", "WorkflowNodeData", "WorkflowEdge", "CallDispositionCodes"]);
    const OPEN_BUT_CHECKED = new Set(["WorkflowConfigurations", "NewWorkflowConfigurations"]);
    const open: string[] = [];
    const seen = new Set<Schema>();
    const walk = (s: Schema | undefined, where: string) => {
      if (!s || typeof s !== "object") return;
      if (s.$ref) {
        const name = s.$ref.split("/").pop();
        if (OPEN.has(name)) return;
        return walk(resolve(s), `${where}<${name}>`);
      }
      if (seen.has(s)) return;
      seen.add(s);
      if (s.properties) {
        if (s.additionalProperties !== false && !OPEN_BUT_CHECKED.has(where.split("<").pop()?.replace(">", "") ?? "")) open.push(where);
        for (const [k, v] of Object.entries<Schema>(s.properties)) walk(v, `${where}.${k}`);
      }
      // A closed object can only be composed by alternatives: in an allOf each closed branch refuses the other
      // branches' fields, so no body satisfies it. An allOf must describe one object, declared whole.
      if ((s.allOf?.length ?? 0) > 1 && s.allOf.some((b: Schema) => resolve(b).properties)) contradictions.push(where);
      for (const key of ["anyOf", "oneOf", "allOf"]) for (const [i, v] of (s[key] ?? []).entries()) walk(v, `${where}|${i}`);
      if (s.items) walk(s.items, `${where}[]`);
    };
    const contradictions: string[] = [];
    for (const { method, path, schema } of bodies) walk(schema, `${method} ${path}`);
    expect(open).toEqual([]);
    expect(contradictions).toEqual([]);
  });

  it("the check above catches an allOf of two closed objects (the shape that accepted no body at all)", async () => {
    const { doc } = await requestBodies();
    const closed = (name: string) => ({ type: "object", properties: { [name]: { type: "string" } }, required: [name], additionalProperties: false });
    const composed = { allOf: [closed("a"), closed("b")] };
    // A JSON Schema validator agrees: no body passes, not even one with both fields.
    const { default: Ajv2020 } = await import("ajv/dist/2020.js");
    const validate = new Ajv2020({ strict: false }).compile(composed);
    expect([{ a: "x", b: "y" }, { a: "x" }, { b: "y" }, {}].map((b) => validate(b))).toEqual([false, false, false, false]);
    // And the public workflow call's body is one closed object: a valid body passes, a typo does not.
    const one = new Ajv2020({ strict: false }).compile({ ...doc.components.schemas.StartWorkflowCall, components: doc.components });
    expect(one({ phone_number: "+14155550100", telephony_configuration_id: 1, initial_context: { a: 1 } })).toBe(true);
    expect(one({ phone_number: "+14155550100", telephony_configuration_idd: 1 })).toBe(false);
  });
});

describe("unknown fields at depth", () => {
  async function post(org: Org, path: string, body: unknown, method = "POST") {
    return call(method, path, { key: org.key, body });
  }

  it("campaign create: max_concurency (a typo) is refused instead of silently using the default", async () => {
    const w = await world();
    const key = await upload(w, goodCsv(2));
    const res = await createCampaign(w, { source_url: key, max_concurency: 3 });
    expect(res.status, res.text).toBe(422);
    expect(res.json.detail).toEqual([{ loc: ["body", "max_concurency"], msg: "Extra inputs are not permitted", type: "extra_forbidden", input: 3 }]);
    const nested = await createCampaign(w, {
      source_url: key,
      retry_config: { max_retry: 1 },
      schedule_config: { timezone: "UTC", slots: [{ day_of_week: 0, start_time: "09:00", end_time: "17:00", day: 1 }], tz: "x" },
      circuit_breaker: { threshold: 0.2 },
    });
    expect(nested.status, nested.text).toBe(422);
    expect(nested.json.detail).toEqual(
      expect.arrayContaining([
        extra(["body", "retry_config", "max_retry"]),
        extra(["body", "schedule_config", "slots", 0, "day"]),
        extra(["body", "schedule_config", "tz"]),
        extra(["body", "circuit_breaker", "threshold"]),
      ]),
    );
    // Nothing was created, and the same body without the typos is accepted.
    const list = await call("GET", "/api/v1/campaign", { key: w.key });
    expect(list.json.items).toEqual([]);
    const ok = await createCampaign(w, { source_url: key, max_concurrency: 3 });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.max_concurrency).toBe(3);

    const patch = await post(w, `/api/v1/campaign/${ok.json.id}`, { retry_config: { retries: 1 }, schedule_config: { slot: [] } }, "PATCH");
    expect(patch.status, patch.text).toBe(422);
    expect(patch.json.detail).toEqual(expect.arrayContaining([extra(["body", "retry_config", "retries"]), extra(["body", "schedule_config", "slot"])]));
  });

  it("telephony configs: each provider's config, on create and on update, refuses an unknown field (and never echoes it)", async () => {
    const org = await createOrg();
    for (const f of FIXTURES) {
      const created = await post(org, "/api/v1/organizations/telephony-configs", {
        name: `c-${f.provider}-${crypto.randomUUID()}`,
        config: { ...f.config(), auth_tokn: "CANARY-secret" },
      });
      expect(created.status, `${f.provider}: ${created.text}`).toBe(422);
      expect(created.json.detail, f.provider).toEqual([
        { loc: ["body", "config", "auth_tokn"], msg: "Extra inputs are not permitted", type: "extra_forbidden" },
      ]);

      const ok = await post(org, "/api/v1/organizations/telephony-configs", { name: `c-${f.provider}-${crypto.randomUUID()}`, config: f.config() });
      expect(ok.status, `${f.provider}: ${ok.text}`).toBe(200);
      const updated = await post(org, `/api/v1/organizations/telephony-configs/${ok.json.id}`, { config: { ...f.patch.config, auth_tokn: "x" } }, "PUT");
      expect(updated.status, `${f.provider}: ${updated.text}`).toBe(422);
      expect(updated.json.detail).toEqual([{ loc: ["body", "config", "auth_tokn"], msg: "Extra inputs are not permitted", type: "extra_forbidden" }]);
      // What the contract allows on update still passes: provider, from_numbers (ignored) and the current mask.
      const allowed = await post(
        org,
        `/api/v1/organizations/telephony-configs/${ok.json.id}`,
        { config: { provider: f.provider, from_numbers: ["+14155550100"], ...f.patch.config } },
        "PUT",
      );
      expect(allowed.status, `${f.provider}: ${allowed.text}`).toBe(200);
      const top = await post(org, `/api/v1/organizations/telephony-configs/${ok.json.id}`, { nmae: "x" }, "PUT");
      expect(top.status).toBe(422);
      expect(top.json.detail).toEqual([extra(["body", "nmae"])]);
    }
    // A nested group (ari external_pbx) is closed too.
    const ari = FIXTURES.find((f) => f.provider === "ari")!.config() as any;
    ari.external_pbx.agent_api.passwd = "x";
    const res = await post(org, "/api/v1/organizations/telephony-configs", { name: "ari-nested", config: ari });
    expect(res.status, res.text).toBe(422);
    expect(res.json.detail).toEqual([extra(["body", "config", "external_pbx", "agent_api", "passwd"])]);
  });

  it("phone numbers, agents, api keys, presign and public calls", async () => {
    const w = await world();
    const numbers = `/api/v1/organizations/telephony-configs/${w.configId}/phone-numbers`;
    expect((await post(w, numbers, { address: "+14155550100", lable: "x" })).json.detail).toEqual([extra(["body", "lable"])]);
    expect((await post(w, "/api/v1/organizations/api-keys", { name: "k", scope: "all" })).json.detail).toEqual([extra(["body", "scope"])]);
    expect((await post(w, "/api/v1/s3/presigned-upload-url", { file_name: "a.csv", file_size: 3, content_type: "text/csv", bucket: "b" })).json.detail).toEqual(
      [extra(["body", "bucket"])],
    );
    expect((await post(w, `/api/v1/workflow/${w.workflowId}`, { nam: "x" }, "PUT")).json.detail).toEqual([extra(["body", "nam"])]);
    expect((await post(w, `/api/v1/workflow/${w.workflowId}/status`, { status: "active", reason: "x" }, "PUT")).json.detail).toEqual([
      extra(["body", "reason"]),
    ]);

    // The free-form objects stay open: unknown keys in the definition's nodes and in the agent's settings are kept.
    const def = {
      nodes: [
        { id: "s", type: "startCall", data: { prompt: "Hi", position_hint: 1 }, position: { x: 1, y: 2 } },
        { id: "e", type: "endCall", data: { prompt: "Bye" } },
      ],
      edges: [{ id: "s-e", source: "s", target: "e", data: { label: "bye", condition: "always", color: "red" } }],
      viewport: { zoom: 1 },
    };
    const agent = await post(w, "/api/v1/workflow/create", {
      name: "open",
      workflow_definition: def,
      workflow_configurations: { anything: { goes: true } },
      template_context_variables: { x: "1" },
    });
    expect(agent.status, agent.text).toBe(200);
    expect(agent.json.workflow_definition.nodes[0].position).toEqual({ x: 1, y: 2 });

    const wf = await call("GET", `/api/v1/workflow/fetch/${w.workflowId}`, { key: w.key });
    const uuid = wf.json.workflow_uuid;
    // The first call endpoint takes no routing: telephony_configuration_id is an unknown field there.
    const byAgent = await post(w, `/api/v1/public/agent/${uuid}`, { phone_number: "+14155550100", telephony_configuration_id: w.configId });
    expect(byAgent.status, byAgent.text).toBe(422);
    expect(byAgent.json.detail).toEqual([extra(["body", "telephony_configuration_id"])]);
    const byWorkflow = await post(w, `/api/v1/public/agent/workflow/${uuid}`, { phone_number: "+14155550100", intial_context: { first_name: "Ada" } });
    expect(byWorkflow.json.detail).toEqual([extra(["body", "intial_context"])]);
  });
});
