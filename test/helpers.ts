// Test support: fresh organizations with keys, and a small client for the Worker over HTTP.
import { env, exports } from "cloudflare:workers";
import { newApiKey } from "../src/organizations/api-keys";
import { documentRefuses } from "./openapi-bodies";

let seq = 0;

export type Org = { id: number; key: string };

/** A new organization and its first key, written straight to D1 (as the bootstrap script does). */
export async function createOrg(name = `org-${Date.now()}-${++seq}`): Promise<Org> {
  const org = await env.DB.prepare("INSERT INTO organizations (name) VALUES (?) RETURNING id").bind(name).first<{ id: number }>();
  const { key, hash, last4 } = await newApiKey();
  await env.DB.prepare("INSERT INTO api_keys (org_id, name, key_hash, key_last4) VALUES (?, 'test', ?, ?)").bind(org!.id, hash, last4).run();
  return { id: org!.id, key };
}

type Opts = { key?: string; body?: unknown; raw?: string; headers?: Record<string, string> };

/** Calls the Worker's fetch handler like an HTTP client would. */
export async function call(method: string, path: string, opts: Opts = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers["X-API-Key"] = opts.key;
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && !headers["Content-Type"]) headers["Content-Type"] = "application/json";
  const res = await exports.default.fetch(new Request(`http://edgedial.test${path}`, { method, headers, body }));
  const text = await res.text();
  if (res.ok && body !== undefined && /json/i.test(headers["Content-Type"] ?? "")) await documentAccepts(method, path, body);
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON (the docs page)
  }
  return { status: res.status, headers: res.headers, text, json };
}

const servedDocument = async () => (await exports.default.fetch(new Request("http://edgedial.test/api/v1/openapi.json"))).json<any>();

/** A JSON body the server accepted must be one the document accepts (test/openapi-bodies.ts says why). */
async function documentAccepts(method: string, path: string, body: string) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return; // not JSON: nothing the document's JSON schema speaks to
  }
  const refused = await documentRefuses(method, path, parsed, servedDocument);
  if (refused) throw new Error(`The server accepted a body its OpenAPI document refuses: ${refused}`);
}
