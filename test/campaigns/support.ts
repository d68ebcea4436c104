// Fixtures for the campaign tests, made through the public API as a client would (an agent, telephony configurations,
// an uploaded CSV through its presigned URL), and a draft campaign seeded as create leaves it (the D1 summary row
// plus a filled object) for the tests that drive campaign routes.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/campaigns/engine/settings";
import { call, createOrg, type Org } from "../helpers";
import { campaignStub, contacts } from "./engine-harness";

export const CAMPAIGNS = "/api/v1/campaign";

export type World = Org & { workflowId: number; configId: number };

export function definition(greeting = "Hello {{first_name}}!") {
  return {
    nodes: [
      { id: "s", type: "startCall", data: { prompt: "Talk to {{ first_name }}", greeting } },
      { id: "e", type: "endCall", data: { prompt: "Say bye" } },
    ],
    edges: [{ id: "s-e", source: "s", target: "e", data: { label: "bye", condition: "always" } }],
  };
}

export async function createWorkflow(org: Org, def: unknown = definition()): Promise<number> {
  const res = await call("POST", "/api/v1/workflow/create", { key: org.key, body: { name: `agent-${crypto.randomUUID()}`, workflow_definition: def } });
  expect(res.status, res.text).toBe(200);
  return res.json.id;
}

export async function createConfig(org: Org, provider: "twilio" | "ari" = "twilio", isDefault = true): Promise<number> {
  const config =
    provider === "twilio"
      ? { provider, account_sid: "AC00000000000000000000000000000001", auth_token: "test-token-0001" }
      : { provider, ari_endpoint: "http://127.0.0.1:9/ari", app_name: "edgedial", app_password: "pw-0001" };
  // The ari endpoint is on loopback: allowed only with the organization's allow_private_pbx (SSRF guard).
  if (provider === "ari")
    expect((await call("PUT", "/api/v1/organizations/calling-policy", { key: org.key, body: { allow_private_pbx: true } })).status).toBe(200);
  const res = await call("POST", "/api/v1/organizations/telephony-configs", {
    key: org.key,
    body: { name: `${provider}-${crypto.randomUUID()}`, is_default_outbound: isDefault, config },
  });
  expect(res.status, res.text).toBe(200);
  return res.json.id;
}

/**
 * A new organization with an agent that uses {{first_name}} and a default configuration. It has no caller ID, so its
 * calling policy names the countries of the test files (by default it would allow none).
 */
export async function world(provider: "twilio" | "ari" = "twilio"): Promise<World> {
  const org = await createOrg();
  const policy = await call("PUT", "/api/v1/organizations/calling-policy", { key: org.key, body: { allowed_countries: ["US", "GB", "DE"] } });
  expect(policy.status, policy.text).toBe(200);
  return { ...org, workflowId: await createWorkflow(org), configId: await createConfig(org, provider) };
}

/** Uploads `content` through the presigned URL; returns the file key. */
export async function upload(org: Org, content: string | Uint8Array, name = "contacts.csv"): Promise<string> {
  const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
  const p = await call("POST", "/api/v1/s3/presigned-upload-url", {
    key: org.key,
    body: { file_name: name, file_size: bytes.byteLength, content_type: "text/csv" },
  });
  expect(p.status, p.text).toBe(200);
  const url = new URL(p.json.upload_url);
  const { exports } = await import("cloudflare:workers");
  const res = await exports.default.fetch(new Request(url, { method: "PUT", headers: { "Content-Type": "text/csv" }, body: bytes }));
  expect(res.status, await res.text()).toBe(200);
  return p.json.file_key;
}

export function createCampaign(w: World, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return call("POST", `${CAMPAIGNS}/create`, { key: w.key, body: { name: "Spring outreach", workflow_id: w.workflowId, ...body }, headers });
}

export const phone = (i: number) => `+1415${2_000_000 + i}`;

/** A CSV with `n` good rows: phone_number, first_name. */
export function goodCsv(n: number, from = 0): string {
  const rows = ["phone_number,first_name"];
  for (let i = 0; i < n; i++) rows.push(`${phone(from + i)},Name${from + i}`);
  return rows.join("\n") + "\n";
}

/** An organization with an agent and a ready ari configuration on a public host name. */
export type OrgWorld = { org: Org; workflowId: number; configId: number };

export async function setupOrg(): Promise<OrgWorld> {
  const org = await createOrg();
  const workflowId = await createWorkflow(org, {
    nodes: [
      { id: "s", type: "startCall", data: { prompt: "Say hi" } },
      { id: "e", type: "endCall", data: { prompt: "Say bye" } },
    ],
    edges: [{ id: "s-e", source: "s", target: "e", data: { label: "bye", condition: "always" } }],
  });
  const cfg = await call("POST", "/api/v1/organizations/telephony-configs", {
    key: org.key,
    body: {
      name: "pbx",
      is_default_outbound: true,
      config: { provider: "ari", ari_endpoint: "http://pbx.test:8088", app_name: "edgedial", app_password: "secret-pw" },
    },
  });
  expect(cfg.status, cfg.text).toBe(200);
  expect(cfg.json.setup_checklist.ready_for_outbound).toBe(true);
  return { org, workflowId, configId: cfg.json.id };
}

/** A campaign's D1 row and its object holding `n` contacts, imported and (unless `finish` is false) finished. */
export async function seedCampaign(o: OrgWorld, opts: { n?: number; name?: string; createdAt?: string; finish?: boolean } = {}) {
  const { n = 3, name = "route test", finish = true } = opts;
  const row = await env.DB.prepare(
    "INSERT INTO campaigns (org_id, name, workflow_id, telephony_configuration_id, state, source_id, settings) VALUES (?, ?, ?, ?, 'draft', 'campaigns/x.csv', ?) RETURNING id",
  )
    .bind(o.org.id, name, o.workflowId, o.configId, JSON.stringify(DEFAULT_SETTINGS))
    .first<{ id: number }>();
  const id = row!.id;
  if (opts.createdAt) await env.DB.prepare("UPDATE campaigns SET created_at = ? WHERE id = ?").bind(opts.createdAt, id).run();
  const stub = campaignStub(id);
  await stub.initialize({
    campaignId: id,
    orgId: o.org.id,
    name,
    workflowId: o.workflowId,
    telephonyConfigurationId: o.configId,
    sourceId: "campaigns/x.csv",
    settings: { ...DEFAULT_SETTINGS, rate_limit: 50 },
  });
  await stub.importContacts(contacts(n));
  if (finish) await stub.finishImport();
  return { id, stub };
}

export const draftCampaign = (o: OrgWorld, n = 3, name = "route test") => seedCampaign(o, { n, name });
