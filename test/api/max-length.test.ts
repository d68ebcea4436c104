// Every maxLength the served document states is one the server enforces: each string field of a request body that
// has one (and no pattern that bounds the length itself) is sent at maxLength + 1 characters inside a body the server
// accepts, and must be refused. A generated client trusts these limits; a server that takes more stores what the
// document says it never holds. Found this way: a configuration update dropped `from_numbers` before checking it
// (any length, any shape was taken). Not counted: a value whose surrounding blanks are trimmed before its limit is
// checked (what is stored is within the limit).
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createOrg, type Org } from "../helpers";
import { seedCampaign, upload } from "../campaigns/support";
import { FIXTURES } from "../telephony/support";

type Schema = Record<string, any>;
let doc: { paths: Record<string, any>; components: { schemas: Record<string, Schema> } };
const deref = (s: Schema | undefined): Schema | undefined => (s?.$ref ? deref(doc.components.schemas[s.$ref.split("/").pop()!]) : s);

/** The body paths of `value` whose schema is a string with a maxLength (URL fields get a URL filler). */
function limitedStrings(
  schema: Schema | undefined,
  value: unknown,
  at: (string | number)[] = [],
  out: Array<{ at: (string | number)[]; max: number; uri: boolean }> = [],
) {
  const s = deref(schema);
  if (!s || value === undefined || value === null) return out;
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    for (const branch of s[key] ?? []) {
      const b = deref(branch)!;
      // A discriminated branch applies only when the value carries its tag.
      const tag = Object.entries<Schema>(b.properties ?? {}).find(
        ([k, p]) => (deref(p)?.enum || deref(p)?.const !== undefined) && (value as any)?.[k] !== undefined,
      );
      if (tag && !(deref(tag[1])!.enum ?? [deref(tag[1])!.const]).includes((value as any)[tag[0]])) continue;
      limitedStrings(b, value, at, out);
    }
  }
  const types = [s.type].flat();
  if (typeof value === "string" && types.includes("string") && s.maxLength !== undefined) {
    // A pattern is kept when one of the fillers matches it (a URL pattern); one that bounds the length itself is not.
    const uri = s.format === "uri" || (!!s.pattern && new RegExp(s.pattern).test(filler(s.maxLength + 1, true)));
    const usable = !s.pattern || new RegExp(s.pattern).test(filler(s.maxLength + 1, uri));
    if (usable && !out.some((o) => o.at.join("/") === at.join("/"))) out.push({ at, max: s.maxLength, uri });
  }
  if (Array.isArray(value) && s.items) for (const [i, v] of value.entries()) limitedStrings(s.items, v, [...at, i], out);
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) {
      const p = s.properties?.[k] ?? (typeof s.additionalProperties === "object" ? s.additionalProperties : undefined);
      limitedStrings(p, v, [...at, k], out);
    }
  }
  return out;
}

const filler = (n: number, uri: boolean) => (uri ? `https://x.example.com/${"a".repeat(n - 22)}` : "a".repeat(n));
function withValue(body: unknown, at: (string | number)[], v: string): unknown {
  const copy = structuredClone(body) as any;
  let o = copy;
  for (const k of at.slice(0, -1)) o = o[k];
  o[at[at.length - 1]] = v;
  return copy;
}

type Case = { method: string; doc: string; url: () => string; body: () => unknown };
let org: Org;
let workflowId: number;
let configId: number;
let campaignId: number;
let webhookId: number;
let numberId: number;
let fileKey: string;

const DEF = () => ({
  nodes: [
    { id: "s", type: "startCall", data: { prompt: "Hi", greeting: "Hello" } },
    { id: "t", type: "transferCall", data: { destination: "+14155550100", mode: "warm", message: "Connecting", whisper_prompt: "Brief" } },
    { id: "h", type: "webhook", data: { url: "https://hooks.example.com/x" } },
    { id: "a", type: "apiTrigger", data: { trigger_path: `p-${crypto.randomUUID()}` } },
    { id: "n", type: "agentNode", data: { prompt: "Ask", extraction_variables: [{ name: "order", type: "string", prompt: "The order" }] } },
    { id: "e", type: "endCall", data: { prompt: "Bye" } },
  ],
  edges: [
    { id: "st", source: "s", target: "t", data: { label: "person", condition: "Wants a person" } },
    { id: "sn", source: "s", target: "n", data: { label: "order", condition: "Has an order" } },
    { id: "ne", source: "n", target: "e", data: { label: "done", condition: "Done" } },
    { id: "te", source: "t", target: "e", data: { on: "no_answer" } },
  ],
  tools: [{ name: "lookup", description: "Look up", url: "https://api.example.com/x", headers: { Authorization: "Bearer k-1" }, nodes: ["n"] }],
});
const VOICE = () => ({
  llm: { provider: "openai", base_url: "https://llm.example.com/v1", model: "m", api_key: "k-llm-1234" },
  stt: { provider: "deepgram", api_key: "k-dg-1234", base_url: "https://dg.example.com" },
  tts: { provider: "elevenlabs", api_key: "k-el-1234", base_url: "https://el.example.com", voice: "v1" },
  llm_fallbacks: [{ provider: "openai", base_url: "https://llm2.example.com/v1", model: "m", api_key: "k-llm-5678" }],
  stt_fallbacks: [{ provider: "deepgram", api_key: "k-dg-5678", base_url: "https://dg2.example.com" }],
  tts_fallbacks: [{ provider: "elevenlabs", api_key: "k-el-5678", base_url: "https://el2.example.com", voice: "v2" }],
  turn: { filler_text: "One moment", reprompt_text: "Still there?", goodbye_text: "Bye", error_text: "Sorry" },
});
const WORKFLOW = () => ({
  name: "limits",
  workflow_definition: DEF(),
  call_disposition_codes: { disposition_codes: ["sale"] },
  workflow_configurations: {
    voice_agent: VOICE(),
    analysis: { summary_prompt: "Sum", data_prompt: "Data", success_criteria: "Ok" },
  },
});
const SCRIPTED = () => ({
  name: "scripted",
  workflow_definition: DEF(),
  workflow_configurations: { voice_agent: { llm: { provider: "scripted", script: [{ user: "hi", prompt: "Hi", say: "Hello", call: { name: "order" } }] } } },
});

const cases = (): Case[] => [
  { method: "POST", doc: "/api/v1/organizations/api-keys", url: () => "/api/v1/organizations/api-keys", body: () => ({ name: "k" }) },
  ...FIXTURES.map((f) => ({
    method: "POST",
    doc: "/api/v1/organizations/telephony-configs",
    url: () => "/api/v1/organizations/telephony-configs",
    body: () => ({ name: `c-${f.provider}`, config: { ...f.config(), from_numbers: ["+14155550100"] } }),
  })),
  {
    method: "POST",
    doc: "/api/v1/organizations/telephony-configs/{config_id}/phone-numbers",
    url: () => `/api/v1/organizations/telephony-configs/${configId}/phone-numbers`,
    body: () => ({ address: `+1415555${String(Math.floor(Math.random() * 9000) + 1000)}`, label: "main" }),
  },
  {
    method: "PUT",
    doc: "/api/v1/organizations/calling-policy",
    url: () => "/api/v1/organizations/calling-policy",
    body: () => ({ allowed_numbers: ["+14155550100"] }),
  },
  {
    method: "POST",
    doc: "/api/v1/organizations/suppressions",
    url: () => "/api/v1/organizations/suppressions",
    body: () => ({ phone_numbers: ["+14155550111"], reason: "asked" }),
  },
  { method: "POST", doc: "/api/v1/workflow/create", url: () => "/api/v1/workflow/create", body: WORKFLOW },
  { method: "POST", doc: "/api/v1/workflow/create", url: () => "/api/v1/workflow/create", body: SCRIPTED },
  {
    method: "POST",
    doc: "/api/v1/organizations/telephony-configs",
    url: () => "/api/v1/organizations/telephony-configs",
    body: () => ({
      name: "ari-full",
      config: {
        ...FIXTURES[0].config(),
        ws_client_name: "edgedial",
        dial_string_template: "PJSIP/{number}@trunk",
        external_pbx: { agent_api: { url: "https://dialer.example.com/agc/api.php", username: "a", password: "p-123456", source: "edgedial" } },
      },
    }),
  },
  {
    method: "PUT",
    doc: "/api/v1/organizations/telephony-configs/{config_id}",
    url: () => `/api/v1/organizations/telephony-configs/${configId}`,
    body: () => ({ name: "renamed", config: { auth_token: "t-0123456789", from_numbers: ["+14155550100"] } }),
  },
  {
    method: "PUT",
    doc: "/api/v1/organizations/telephony-configs/{config_id}/phone-numbers/{number_id}",
    url: () => `/api/v1/organizations/telephony-configs/${configId}/phone-numbers/${numberId}`,
    body: () => ({ label: "renamed", address: "+14155550177" }),
  },
  {
    method: "POST",
    doc: "/api/v1/campaign/create",
    url: () => "/api/v1/campaign/create",
    body: () => ({ name: "limits", workflow_id: workflowId, telephony_configuration_id: configId, source_id: fileKey }),
  },
  {
    method: "PUT",
    doc: "/api/v1/workflow/{workflow_id}",
    url: () => `/api/v1/workflow/${workflowId}`,
    body: () => ({
      workflow_configurations: {
        voice_agent: {
          llm: { provider: "scripted", script: [{ user: "hi", prompt: "Hi", say: "Hello", call: { name: "order" } }] },
          stt: { provider: "scripted", clips: [{ text: "hello", recording_id: "rec-1" }] },
        },
      },
    }),
  },
  {
    method: "POST",
    doc: "/api/v1/organizations/erasure",
    url: () => "/api/v1/organizations/erasure",
    body: () => ({ phone_number: "+14155550123", files_after: "campaigns/1/a.csv" }),
  },
  {
    method: "PUT",
    doc: "/api/v1/workflow/{workflow_id}",
    url: () => `/api/v1/workflow/${workflowId}`,
    body: () => {
      const { name, ...rest } = WORKFLOW();
      return { ...rest, name };
    },
  },
  {
    method: "POST",
    doc: "/api/v1/s3/presigned-upload-url",
    url: () => "/api/v1/s3/presigned-upload-url",
    body: () => ({ file_name: "contacts.csv", file_size: 10, content_type: "text/csv" }),
  },
  { method: "PATCH", doc: "/api/v1/campaign/{campaign_id}", url: () => `/api/v1/campaign/${campaignId}`, body: () => ({ name: "renamed" }) },
  {
    method: "POST",
    doc: "/api/v1/webhooks",
    url: () => "/api/v1/webhooks",
    body: () => ({ url: "https://hooks.example.com/x", events: ["run.completed"], description: "d" }),
  },
  {
    method: "PATCH",
    doc: "/api/v1/webhooks/{webhook_id}",
    url: () => `/api/v1/webhooks/${webhookId}`,
    body: () => ({ url: "https://hooks.example.com/y", description: "d" }),
  },
];

beforeAll(async () => {
  doc = await (await exports.default.fetch(new Request("http://edgedial.test/api/v1/openapi.json"))).json();
  org = await createOrg();
  const w = await call("POST", "/api/v1/workflow/create", { key: org.key, body: WORKFLOW() });
  expect(w.status, w.text).toBe(200);
  workflowId = w.json.id;
  const cfg = await call("POST", "/api/v1/organizations/telephony-configs", { key: org.key, body: { name: "c", config: FIXTURES[4].config() } });
  expect(cfg.status, cfg.text).toBe(200);
  configId = cfg.json.id;
  const hook = await call("POST", "/api/v1/webhooks", { key: org.key, body: { url: "https://hooks.example.com/x", events: ["run.completed"] } });
  expect(hook.status, hook.text).toBe(201);
  webhookId = hook.json.id;
  const number = await call("POST", `/api/v1/organizations/telephony-configs/${configId}/phone-numbers`, { key: org.key, body: { address: "+14155550177" } });
  expect(number.status, number.text).toBe(200);
  numberId = number.json.id;
  fileKey = await upload(org, "phone_number,first_name\n+14155550140,Ada\n");
  campaignId = (await seedCampaign({ org, workflowId, configId }, { n: 1 })).id;
});

describe("the document's maxLengths, as the server enforces them", () => {
  it("every string field with a maxLength is refused at maxLength + 1 inside a body the server accepts", async () => {
    const accepted: string[] = [];
    let probed = 0;
    for (const c of cases()) {
      const schema = doc.paths[c.doc][c.method.toLowerCase()].requestBody.content["application/json"].schema;
      const base = c.body();
      const ok = await call(c.method, c.url(), { key: org.key, body: base });
      expect(ok.status, `${c.method} ${c.doc} base: ${ok.text.slice(0, 300)}`).toBeLessThan(300);
      for (const f of limitedStrings(schema, base)) {
        probed++;
        // Straight to the Worker: call() would fail the test at the first body the document refuses and the server takes.
        const body = JSON.stringify(withValue(c.body(), f.at, filler(f.max + 1, f.uri)));
        const res = await exports.default.fetch(
          new Request(`http://edgedial.test${c.url()}`, { method: c.method, headers: { "X-API-Key": org.key, "Content-Type": "application/json" }, body }),
        );
        await res.body?.cancel();
        if (res.status < 300) accepted.push(`${c.method} ${c.doc} ${f.at.join(".")} (maxLength ${f.max})`);
      }
    }
    expect(accepted, accepted.join("\n")).toEqual([]);
    expect(probed).toBeGreaterThan(60);
  });
});
