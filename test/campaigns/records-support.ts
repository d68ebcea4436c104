// Fixtures for the campaign record tests, made through the public API: an agent, telephony configurations and an
// uploaded CSV (presigned URL, then PUT), as a client would.
import { expect } from "vitest";
import { call, createOrg, type Org } from "../helpers";

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
