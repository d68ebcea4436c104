// Starter templates over HTTP: listed with their test values and scripted model, each created as an agent that reads
// back as the template and passes validate like any agent; the scripted model stored on request (or where the
// deployment runs the offline engines), never the other way; an unknown template is a 404, a bad body a 422. Offline,
// such an agent (a model and no speech engines named) speaks and hears on the offline engines.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { ClipSpeechToText, ClipTextToSpeech } from "../../src/agent/clip-speech";
import { enginesFor } from "../../src/agent/engines";
import { ScriptedModel } from "../../src/agent/scripted-model";
import { WorkersAiSpeechToText } from "../../src/agent/workers-ai-speech";
import { call, createOrg, type Org } from "../helpers";

let org: Org;
beforeAll(async () => {
  org = await createOrg();
});

type Template = {
  id: string;
  name: string;
  direction: string;
  workflow_definition: { nodes: { id: string; type: string; data?: Record<string, unknown> }[]; tools?: { name: string; url: string }[] };
  template_context_variables: Record<string, string>;
  call_disposition_codes: string[];
  scripted_model: unknown[];
  sample_conversation: string[];
  change_before_use: { path: string; description: string }[];
};

async function listTemplates(): Promise<Template[]> {
  const res = await call("GET", "/api/v1/workflow/templates", { key: org.key });
  expect(res.status, res.text).toBe(200);
  return res.json.items;
}

describe("GET /api/v1/workflow/templates", () => {
  it("lists the three starters with their test values, scripted model and placeholders", async () => {
    const items = await listTemplates();
    expect(items.map((t) => t.id)).toEqual(["lead-qualification", "appointment-booking", "inbound-receptionist"]);
    const [lead, booking, desk] = items;
    expect(lead.workflow_definition.nodes.find((n) => n.type === "transferCall")?.data?.mode).toBe("warm");
    expect(booking.workflow_definition.tools?.[0]).toMatchObject({ name: "book_appointment", url: "https://example.com/edgedial/book-appointment" });
    expect(desk.direction).toBe("inbound");
    for (const t of items) {
      expect(Object.keys(t.template_context_variables).length).toBeGreaterThan(0);
      expect(t.scripted_model.length).toBeGreaterThan(0);
      expect(t.sample_conversation.length).toBeGreaterThan(0);
      expect(t.change_before_use.length).toBeGreaterThan(0);
    }
  });

  it("needs an API key", async () => {
    expect((await call("GET", "/api/v1/workflow/templates")).status).toBe(401);
  });
});

describe("POST /api/v1/workflow/templates/{template_id}", () => {
  it("creates each template as an agent that reads back as the template and is valid", async () => {
    for (const t of await listTemplates()) {
      const res = await call("POST", `/api/v1/workflow/templates/${t.id}`, { key: org.key });
      expect(res.status, `${t.id}: ${res.text}`).toBe(200);
      const got = await call("GET", `/api/v1/workflow/fetch/${res.json.id}`, { key: org.key });
      expect(got.status).toBe(200);
      expect(got.json).toMatchObject({
        name: t.name,
        status: "active",
        version_number: 1,
        workflow_definition: t.workflow_definition,
        template_context_variables: t.template_context_variables,
        call_disposition_codes: { disposition_codes: t.call_disposition_codes },
      });
      // This suite's Worker has a (fake) Workers AI binding: the deployment's engines, not the scripted model.
      expect(got.json.workflow_configurations).toEqual({});
      const verdict = await call("POST", `/api/v1/workflow/${res.json.id}/validate`, { key: org.key });
      expect(verdict.json, t.id).toMatchObject({ is_valid: true, errors: [] });
    }
  });

  it("stores the scripted model when asked, under the name given", async () => {
    const [lead] = await listTemplates();
    const res = await call("POST", "/api/v1/workflow/templates/lead-qualification", {
      key: org.key,
      body: { name: "My leads", scripted_model: true },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json.name).toBe("My leads");
    expect(res.json.workflow_configurations).toEqual({ voice_agent: { llm: { provider: "scripted", script: lead.scripted_model } } });
  });

  it("answers 404 for an unknown template and 422 for a bad body, creating nothing", async () => {
    const before = (await call("GET", "/api/v1/workflow/fetch?limit=100", { key: org.key })).json.items.length;
    const missing = await call("POST", "/api/v1/workflow/templates/no-such-template", { key: org.key });
    expect(missing.status).toBe(404);
    const bad = await call("POST", "/api/v1/workflow/templates/appointment-booking", { key: org.key, body: { scripted_model: "yes", colour: "red" } });
    expect(bad.status).toBe(422);
    const locs = bad.json.detail.map((d: { loc: unknown[] }) => d.loc.join("."));
    expect(locs).toEqual(expect.arrayContaining(["body.scripted_model", "body.colour"]));
    const after = (await call("GET", "/api/v1/workflow/fetch?limit=100", { key: org.key })).json.items.length;
    expect(after).toBe(before);
  });
});

describe("an agent from a template on the offline engines", () => {
  it("runs its scripted model with the offline speech engines; with Workers AI reachable, its speech is Workers AI's", async () => {
    const res = await call("POST", "/api/v1/workflow/templates/inbound-receptionist", { key: org.key, body: { scripted_model: true } });
    expect(res.status, res.text).toBe(200);
    const configurations = res.json.workflow_configurations;
    const allowsPrivate = async () => false;
    // npm run dev without --workers-ai: the AI binding exists but reaches nothing.
    const offline = await enginesFor({ ...env, OFFLINE_ENGINES: "true" } as unknown as Env, org.id, configurations, allowsPrivate);
    expect(offline.ok, JSON.stringify(offline)).toBe(true);
    if (!offline.ok) return;
    expect(offline.engines.model).toBeInstanceOf(ScriptedModel);
    expect(offline.engines.stt).toBeInstanceOf(ClipSpeechToText);
    expect(offline.engines.tts).toBeInstanceOf(ClipTextToSpeech);
    const online = await enginesFor(env, org.id, configurations, allowsPrivate);
    expect(online.ok && online.engines.stt).toBeInstanceOf(WorkersAiSpeechToText);
  });
});
