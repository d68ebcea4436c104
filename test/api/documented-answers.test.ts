// What a schema fuzz run found the document did not say, now said: each answer is one the operation documents, and
// the document's request schemas agree with the server on the bodies around each rule.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createOrg } from "../helpers";
import { documentRefuses } from "../openapi-bodies";
import { world } from "../campaigns/support";

const served = async () => (await exports.default.fetch(new Request("http://edgedial.test/api/v1/openapi.json"))).json<any>();
const refuses = (method: string, path: string, body: unknown) => documentRefuses(method, path, body, served);

/** The documented status codes of an operation. */
async function documented(path: string, method: string): Promise<string[]> {
  return Object.keys((await served()).paths[path][method].responses);
}

describe("answers the document states", () => {
  it("an unknown provider on the provisioned-application inbound URL is a documented 404", async () => {
    const res = await call("POST", "/api/v1/telephony/nope/inbound", { raw: "", headers: { "Content-Type": "application/x-www-form-urlencoded" } });
    expect(res.status).toBe(404);
    expect(await documented("/api/v1/telephony/{provider}/inbound", "post")).toContain("404");
  });

  it("the provisioned-application inbound URL says what it is for: calls no agent answers yet, declined with a hang-up", async () => {
    const op = (await served()).paths["/api/v1/telephony/{provider}/inbound"].post;
    expect(`${op.summary} ${op.description}`).not.toMatch(/not handled yet/i);
    expect(op.description).toContain("/telephony/{provider}/inbound/{config_id}/{token}");
    const res = await call("POST", "/api/v1/telephony/twilio/inbound", {
      raw: "CallSid=CA1&To=%2B14155550100",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(200);
    expect(res.text).toContain("<Hangup");
  });

  it("an upload key with a line break (or any key not issued) is the documented 403, not a 404", async () => {
    for (const key of ["campaigns/1/a%0Ab/c.csv", "campaigns/1/x/c.csv", "%0A"]) {
      const res = await call("PUT", `/api/v1/uploads/${key}?size=1&type=text/csv&expires=9999999999&sig=00`, {
        raw: "x",
        headers: { "Content-Type": "text/csv" },
      });
      expect(res.status, key).toBe(403);
      expect(res.json).toEqual({ detail: "Invalid upload signature" });
    }
    expect(await documented("/api/v1/uploads/{key}", "put")).toContain("403");
  });

  it("the recording link's expires is a non-null integer with a maximum", async () => {
    const doc = await served();
    const expires = doc.paths["/api/v1/recordings/{run_id}"].get.parameters.find((p: any) => p.name === "expires");
    expect(expires.schema).toMatchObject({ type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
  });

  it("every integer in a request (bodies, paths, queries) has a documented maximum", async () => {
    const doc = await served();
    const missing: string[] = [];
    const seen = new Set<object>();
    const walk = (s: any, where: string) => {
      if (!s || typeof s !== "object" || seen.has(s)) return;
      seen.add(s);
      if (s.$ref) return walk(doc.components.schemas[s.$ref.split("/").pop()], where);
      const types = [s.type].flat();
      if (types.includes("integer") && s.maximum === undefined && s.exclusiveMaximum === undefined) missing.push(where);
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${where}.${k}`);
      for (const key of ["anyOf", "oneOf", "allOf"]) for (const v of s[key] ?? []) walk(v, where);
      walk(s.items, `${where}[]`);
      if (typeof s.additionalProperties === "object") walk(s.additionalProperties, `${where}{}`);
    };
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        for (const p of op.parameters ?? []) walk(p.schema, `${method} ${path} ${p.name}`);
        walk(op.requestBody?.content?.["application/json"]?.schema, `${method} ${path} body`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe("rules the request schemas state, as the server applies them", () => {
  it("a Deepgram or ElevenLabs api_key: required on create (422 missing), optional on update to keep the stored one", async () => {
    const org = await createOrg();
    const def = {
      nodes: [
        { id: "s", type: "startCall", data: { prompt: "Hi" } },
        { id: "e", type: "endCall", data: { prompt: "Bye" } },
      ],
      edges: [{ id: "se", source: "s", target: "e", data: { label: "bye", condition: "always" } }],
    };
    for (const provider of ["deepgram", "elevenlabs"]) {
      const stt = { provider };
      const body = { name: "keys", workflow_definition: def, workflow_configurations: { voice_agent: { stt } } };
      const res = await call("POST", "/api/v1/workflow/create", { key: org.key, body });
      expect(res.status, res.text).toBe(422);
      expect(res.json.detail).toEqual([
        expect.objectContaining({ loc: ["body", "workflow_configurations", "voice_agent", "stt", "api_key"], type: "missing" }),
      ]);
      expect(await refuses("POST", "/api/v1/workflow/create", body)).toMatch(/api_key/);

      const keyed = { ...body, workflow_configurations: { voice_agent: { stt: { provider, api_key: "k-123456789" } } } };
      const created = await call("POST", "/api/v1/workflow/create", { key: org.key, body: keyed });
      expect(created.status, created.text).toBe(200);
      // Omitted on update: the stored key is kept (the document allows it and says when).
      const update = { workflow_configurations: { voice_agent: { stt } } };
      expect(await refuses("PUT", `/api/v1/workflow/${created.json.id}`, update)).toBeNull();
      const kept = await call("PUT", `/api/v1/workflow/${created.json.id}`, { key: org.key, body: update });
      expect(kept.status, kept.text).toBe(200);
      const doc = await served();
      expect(JSON.stringify(doc.components.schemas.VoiceAgentSettings)).toMatch(/Required unless this agent already has a key stored/);
    }
  });

  it("webhook urls: https (and, in this local-development document, http); anything else refused by both", async () => {
    const org = await createOrg();
    for (const url of ["ftp://example.com/x", "example.com/hook", "javascript:alert(1)", "https:example.com/x"]) {
      const body = { url, events: ["run.completed"] };
      expect(await refuses("POST", "/api/v1/webhooks", body), url).not.toBeNull();
      const res = await call("POST", "/api/v1/webhooks", { key: org.key, body });
      expect(res.status, url).toBe(422);
    }
    expect(await refuses("POST", "/api/v1/webhooks", { url: " HTTPS://example.com/x", events: ["run.completed"] })).toBeNull();
    // A deployed document says https only: the pattern a LOCAL_DEV server relaxes is kept beside it.
    const url = (await served()).components.schemas.CreateWebhookEndpoint.properties.url;
    expect(new RegExp(url.pattern).test("http://127.0.0.1:9000/h")).toBe(true);
    expect(url["x-local-dev-pattern"]).toBe(url.pattern);
  });

  it("default_country is two letters; source_url or source_id is required", async () => {
    const w = await world();
    const start = `/api/v1/public/agent/${crypto.randomUUID()}`;
    for (const c of ["USA", "u", "1A"]) expect(await refuses("POST", start, { phone_number: "4155550100", default_country: c }), c).not.toBeNull();
    expect(await refuses("POST", start, { phone_number: "4155550100", default_country: "us" })).toBeNull();
    const res = await call("POST", "/api/v1/campaign/create", { key: w.key, body: { name: "x", workflow_id: w.workflowId } });
    expect(res.status).toBe(422);
    expect(res.json.detail).toEqual([expect.objectContaining({ loc: ["body", "source_url"], type: "missing" })]);
    expect(await refuses("POST", "/api/v1/campaign/create", { name: "x", workflow_id: 1 })).not.toBeNull();
    expect(await refuses("POST", "/api/v1/campaign/create", { name: "x", workflow_id: 1, source_id: "k" })).toBeNull();
    expect(await refuses("POST", "/api/v1/campaign/1/contacts", {})).not.toBeNull();
  });
});
