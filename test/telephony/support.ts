// Shared by the telephony tests: a client that checks every response for planted secrets, canary
// fixtures for all eight providers, and direct D1 access.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { getDb } from "../../src/lib/db";
import { telephonyConfigs } from "../../src/db/schema";
import { eq } from "drizzle-orm";
import type { ProviderName } from "../../src/telephony/providers/types";
import { call } from "../helpers";

/** Every sensitive value planted by these tests contains this marker; no response may ever carry it. */
export const CANARY = "CANARY";
let seq = 0;
export const canary = (tag: string) => `${CANARY}_${tag}_${crypto.randomUUID()}_${++seq}_tail`;

export const CONFIGS = "/api/v1/organizations/telephony-configs";
export const PROVIDERS_PATH = "/api/v1/organizations/telephony-providers";

/** `call`, plus the suite-wide rule: no response body contains a canary secret. */
export async function api(method: string, path: string, opts: Parameters<typeof call>[2] = {}) {
  const res = await call(method, path, opts);
  expect(res.text.includes(CANARY), `${method} ${path} leaked a secret: ${res.text.slice(0, 300)}`).toBe(false);
  return res;
}

export async function configRow(id: number) {
  return getDb(env).select().from(telephonyConfigs).where(eq(telephonyConfigs.id, id)).get();
}

/** The raw D1 row as text, for "no plaintext at rest" checks. */
export async function rawRowText(id: number): Promise<string> {
  const row = await env.DB.prepare("SELECT * FROM telephony_configs WHERE id = ?").bind(id).first();
  return JSON.stringify(row);
}

export type Fixture = {
  provider: ProviderName;
  /** A complete create config with a canary in every sensitive field. */
  config: () => Record<string, unknown>;
  /** A partial update of one non-secret field and where to read it back in `credentials`. */
  patch: { config: Record<string, unknown>; path: string; value: unknown };
  /** The secret to rotate in the lifecycle test. */
  rotate: string;
};

const pem = () => `-----BEGIN PRIVATE KEY-----\n${canary("pem")}\n-----END PRIVATE KEY-----`;

export const FIXTURES: Fixture[] = [
  {
    provider: "ari",
    config: () => ({
      provider: "ari",
      ari_endpoint: "http://pbx.example.test:8088",
      app_name: "edgedial",
      app_password: canary("ari_pw"),
      external_pbx: {
        agent_api: { url: "https://dialer.example.test/agc/api.php", username: "agent", password: canary("agent_pw") },
        non_agent_api: { url: "https://dialer.example.test/vicidial/non_agent_api.php", username: "lead", password: canary("lead_pw") },
      },
    }),
    patch: { config: { external_pbx: { timeout_seconds: 12 } }, path: "external_pbx.timeout_seconds", value: 12 },
    rotate: "external_pbx.agent_api.password",
  },
  {
    provider: "cloudonix",
    config: () => ({ provider: "cloudonix", bearer_token: canary("cx_token"), domain_id: "acme.cloudonix.net", application_name: "edgedial-app" }),
    patch: { config: { domain_id: "other.cloudonix.net" }, path: "domain_id", value: "other.cloudonix.net" },
    rotate: "bearer_token",
  },
  {
    provider: "plivo",
    config: () => ({ provider: "plivo", auth_id: "MAXXXXXXXXXXXXXXXXXX", auth_token: canary("plivo_token"), application_id: "12345" }),
    patch: { config: { application_id: "67890" }, path: "application_id", value: "67890" },
    rotate: "auth_token",
  },
  {
    provider: "telnyx",
    config: () => ({
      provider: "telnyx",
      api_key: canary("telnyx_key"),
      connection_id: "conn-1",
      webhook_public_key: "iojj3XQJ8ZX9UtstPLpdcspnCb8dlBIb83SIAbQPb1w=",
    }),
    patch: { config: { connection_id: "conn-2" }, path: "connection_id", value: "conn-2" },
    rotate: "api_key",
  },
  {
    provider: "twilio",
    config: () => ({ provider: "twilio", account_sid: "AC00000000000000000000000000000001", auth_token: canary("twilio_token") }),
    patch: { config: { amd_enabled: true }, path: "amd_enabled", value: true },
    rotate: "auth_token",
  },
  {
    provider: "vobiz",
    config: () => ({ provider: "vobiz", auth_id: "MA_VOBIZ_1", auth_token: canary("vobiz_token"), application_id: "app-1" }),
    patch: { config: { auth_id: "MA_VOBIZ_2" }, path: "auth_id", value: "MA_VOBIZ_2" },
    rotate: "auth_token",
  },
  {
    provider: "vonage",
    config: () => ({
      provider: "vonage",
      api_key: "abc123",
      api_secret: canary("vonage_secret"),
      application_id: "aaaaaaaa-0000-4000-8000-000000000001",
      private_key: pem(),
      signature_secret: canary("vonage_sig"),
    }),
    patch: { config: { application_id: "aaaaaaaa-0000-4000-8000-000000000002" }, path: "application_id", value: "aaaaaaaa-0000-4000-8000-000000000002" },
    rotate: "signature_secret",
  },
  {
    provider: "exotel",
    config: () => ({ provider: "exotel", account_sid: "acme1", api_key: canary("exotel_key"), api_token: canary("exotel_token") }),
    patch: { config: { api_base_url: "https://api.exotel.com" }, path: "api_base_url", value: "https://api.exotel.com" },
    rotate: "api_token",
  },
];

export function getAt(obj: unknown, path: string): unknown {
  return path.split(".").reduce<unknown>((cur, k) => (cur && typeof cur === "object" ? (cur as Record<string, unknown>)[k] : undefined), obj);
}

export function withoutPath(obj: Record<string, unknown>, path: string): Record<string, unknown> {
  const copy = structuredClone(obj);
  const keys = path.split(".");
  let cur: Record<string, unknown> = copy;
  for (const k of keys.slice(0, -1)) cur = cur[k] as Record<string, unknown>;
  delete cur[keys[keys.length - 1]];
  return copy;
}

export const expectedMask = (v: string) => (v.length <= 4 ? "*".repeat(v.length) : "*".repeat(v.length - 4) + v.slice(-4));
