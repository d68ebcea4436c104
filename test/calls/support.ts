// Test support for calls: the carrier simulator's control API (an auxiliary Worker every outbound fetch
// reaches), delivery of the callbacks it produces to the Worker, and a ready configuration per provider.
import { env, exports } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { expect } from "vitest";
import { eq } from "drizzle-orm";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import type { ProviderName } from "../../src/telephony/providers/types";
import type { Callback, Outcome } from "../../src/dev/simulator/types";
import type { PlayRequest } from "../../src/dev/simulator/sim-object";
import { testCampaignId } from "../campaign-ids";
import { call, createOrg, type Org } from "../helpers";
import { DEFAULT_SETTINGS, type CampaignSettings, type RetryConfig } from "../../src/campaigns/engine/settings";
import type { ContactInput } from "../../src/campaigns/engine/object-api";

export const SIM = "http://sim.test";
/** Carriers whose signed deliveries are once-only (a nonce, a timestamp, a JWT id): the same bytes twice are a replay. */
export const ONCE_ONLY: ReadonlySet<ProviderName> = new Set(["plivo", "vobiz", "telnyx", "vonage"]);
export const CALLEE = "+14155550123";
export const CALLER = "+14155550100";
/** What the test agent's template variables need (GREETING_DEF uses {{first_name}}): a call without it is a 422. */
export const CONTEXT = { first_name: "Ada" };

/** How each carrier is named in the errors the API returns. */
export const LABEL: Record<ProviderName, string> = {
  twilio: "Twilio",
  plivo: "Plivo",
  vobiz: "Vobiz",
  telnyx: "Telnyx",
  vonage: "Vonage",
  cloudonix: "Cloudonix",
  exotel: "Exotel",
  ari: "Asterisk ARI",
  sandbox: "Twilio",
};

export async function sim<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${SIM}/_sim${path}`, {
    method,
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, `simulator ${method} ${path}`).toBe(200);
  return res.json() as Promise<T>;
}

export type SimAccount = { id: string; provider: ProviderName; credentials: Record<string, string> };
export type Recorded = { method: string; path: string; query: Record<string, string[]>; headers: Record<string, string>; body: string };

export const simAccount = (provider: ProviderName) => sim<SimAccount>("POST", "/accounts", { provider });
export const simRequests = (acct: SimAccount) => sim<Recorded[]>("GET", `/accounts/${acct.id}/requests`);
export const simFault = (acct: SimAccount, op: string, status: number, message?: string, times = 1) =>
  sim("POST", `/accounts/${acct.id}/faults`, { op, status, message, times });
/** The carrier refuses the next `times` `op` requests with `status` (429/503) and, when given, a `Retry-After`. */
export const simBusy = (acct: SimAccount, op: string, status: 429 | 503, opts: { retryAfter?: string; times?: number; message?: string } = {}) =>
  sim("POST", `/accounts/${acct.id}/faults`, {
    op,
    status,
    message: opts.message ?? (status === 429 ? "Too Many Requests" : "Service Unavailable"),
    times: opts.times ?? 1,
    retry_after: opts.retryAfter,
  });
/** The connection to the carrier fails on the next `op` request, as a refused connect does. */
export const simRefuse = (acct: SimAccount, op: string, times = 1) => sim("POST", `/accounts/${acct.id}/faults`, { op, status: 503, times, refuse: true });
/** The carrier sits on the next `op` request for `hangMs` before answering (a hung API, for our timeout). */
export const simHang = (acct: SimAccount, op: string, hangMs: number) =>
  sim("POST", `/accounts/${acct.id}/faults`, { op, status: 504, message: "answered too late", hang_ms: hangMs });
export const play = async (callId: string, outcome: Outcome, opts: Omit<PlayRequest, "outcome"> = {}) =>
  (await sim<{ callbacks: Callback[] }>("POST", `/calls/${encodeURIComponent(callId)}/outcome`, { outcome, ...opts })).callbacks;
/** The carrier's own retry of a callback: signed afresh where its deliveries carry a nonce, timestamp or JWT id. */
export const redeliver = async (callId: string, cb: Callback) =>
  (await sim<{ callback: Callback }>("POST", `/calls/${encodeURIComponent(callId)}/redeliver`, { callback: cb })).callback;
export const flush = async (callId: string) => (await sim<{ callbacks: Callback[] }>("POST", `/calls/${encodeURIComponent(callId)}/flush`, {})).callbacks;

/** The carrier's request for a callback as the simulator built it (at `url` instead, for a tampered one). */
export const callbackRequest = (cb: Callback, url = cb.url) =>
  new Request(url, { method: cb.method, headers: cb.headers, body: cb.method === "GET" ? undefined : cb.body });

/** Sends one carrier callback to the Worker exactly as the simulator built it (bytes, headers, URL). */
export async function deliver(cb: Callback, tweak: { body?: string; headers?: Record<string, string | null>; url?: string } = {}) {
  const headers = new Headers(cb.headers);
  for (const [k, v] of Object.entries(tweak.headers ?? {})) v === null ? headers.delete(k) : headers.set(k, v);
  const body = tweak.body ?? cb.body;
  const res = await exports.default.fetch(new Request(tweak.url ?? cb.url, { method: cb.method, headers, body: cb.method === "GET" ? undefined : body }));
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** Delivers what the carrier sends in reaction to our commands (a hang-up, Telnyx's speak), until nothing is left. */
export async function drain(callId: string) {
  for (let i = 0; i < 5; i++) {
    const more = await flush(callId);
    if (!more.length) return;
    await deliverAll(more);
  }
  throw new Error("the simulator kept producing callbacks");
}

/** Delivers every callback in order and expects each to be accepted (2xx). */
export async function deliverAll(cbs: Callback[]) {
  const out = [];
  for (const cb of cbs) {
    if (cb.kind === "stream") continue;
    const r = await deliver(cb);
    expect(r.status, `${cb.kind} ${cb.url}: ${r.text}`).toBeLessThan(300);
    out.push({ cb, ...r });
  }
  return out;
}

export const GREETING_DEF = () => ({
  nodes: [
    { id: "start", type: "startCall", data: { prompt: "Talk to {{first_name}}", greeting: "Hello {{first_name}}, this is Edgedial & co." } },
    { id: "end", type: "endCall", data: { prompt: "Say bye" } },
    { id: "trigger", type: "apiTrigger", data: { trigger_path: `path-${crypto.randomUUID()}` } },
  ],
  edges: [{ id: "e", source: "start", target: "end", data: { label: "bye", condition: "always" } }],
});

export async function createAgent(org: Org) {
  const res = await call("POST", "/api/v1/workflow/create", {
    key: org.key,
    body: { name: `agent-${crypto.randomUUID()}`, workflow_definition: GREETING_DEF() },
  });
  expect(res.status, res.text).toBe(200);
  return res.json as { id: number; workflow_uuid: string; workflow_definition: ReturnType<typeof GREETING_DEF> };
}

/** The `config` of a telephony configuration for a simulator account. */
export function configFor(acct: SimAccount, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const c = acct.credentials;
  const base: Record<ProviderName, Record<string, unknown>> = {
    twilio: { account_sid: c.account_sid, auth_token: c.auth_token },
    plivo: { auth_id: c.auth_id, auth_token: c.auth_token },
    vobiz: { auth_id: c.auth_id, auth_token: c.auth_token },
    telnyx: { api_key: c.api_key, webhook_public_key: c.webhook_public_key },
    vonage: {
      api_key: c.api_key,
      api_secret: c.api_secret,
      application_id: c.application_id,
      private_key: c.private_key,
      signature_secret: c.signature_secret,
    },
    cloudonix: { bearer_token: c.bearer_token, domain_id: c.domain_id },
    exotel: { account_sid: c.account_sid, api_key: c.api_key, api_token: c.api_token },
    ari: { ari_endpoint: `${SIM}/ari/${acct.id}`, app_name: c.app_name, app_password: c.app_password },
    sandbox: {},
  };
  return { provider: acct.provider, ...base[acct.provider], ...extra };
}

export type Setup = { org: Org; acct: SimAccount; configId: number; agent: Awaited<ReturnType<typeof createAgent>> };

/** An organization with an agent and a ready configuration on a fresh simulator account (provisioned on save). */
export async function setup(provider: ProviderName, extra: Record<string, unknown> = {}, org?: Org, caller = CALLER): Promise<Setup> {
  org ??= await createOrg();
  const acct = await simAccount(provider);
  const created = await call("POST", "/api/v1/organizations/telephony-configs", {
    key: org.key,
    body: { name: `${provider}-${crypto.randomUUID()}`, is_default_outbound: true, config: configFor(acct, extra) },
  });
  expect(created.status, created.text).toBe(200);
  const configId = created.json.id as number;
  const num = await call("POST", `/api/v1/organizations/telephony-configs/${configId}/phone-numbers`, {
    key: org.key,
    body: { address: caller, is_default_caller_id: true },
  });
  expect(num.status, num.text).toBe(200);
  const agent = await createAgent(org);
  return { org, acct, configId, agent };
}

/** `s` with a new agent of its organization whose Start node has `greeting` (none when undefined). */
export async function agentWith(s: Setup, greeting: string | undefined): Promise<Setup> {
  const def = structuredClone(s.agent.workflow_definition);
  const start = def.nodes.find((n) => n.type === "startCall")!;
  if (greeting === undefined) delete (start.data as { greeting?: string }).greeting;
  else start.data.greeting = greeting;
  def.nodes.find((n) => n.type === "apiTrigger")!.data.trigger_path = `path-${crypto.randomUUID()}`;
  const res = await call("POST", "/api/v1/workflow/create", { key: s.org.key, body: { name: `agent-${crypto.randomUUID()}`, workflow_definition: def } });
  expect(res.status, res.text).toBe(200);
  return { ...s, agent: res.json };
}

/** Starts a call through the public endpoint and returns the run id, checking the contract's 200 shape. */
export async function startCall(s: Setup, body: Record<string, unknown> = {}) {
  const res = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
    key: s.org.key,
    body: { phone_number: CALLEE, initial_context: { first_name: "Ada" }, ...body },
  });
  expect(res.status, res.text).toBe(200);
  expect(res.json).toEqual({ status: "initiated", workflow_run_id: expect.any(Number), workflow_run_name: `WR-${res.json.workflow_run_id}` });
  return res.json.workflow_run_id as number;
}

export async function runRow(id: number) {
  return (await getDb(env).select().from(workflowRuns).where(eq(workflowRuns.id, id)).get())!;
}

export async function runApi(s: Setup, id: number) {
  const res = await call("GET", `/api/v1/workflow/${s.agent.id}/runs/${id}`, { key: s.org.key });
  expect(res.status, res.text).toBe(200);
  return res.json;
}

/** Waits for something asynchronous (the ARI events socket) without a fixed sleep. */
export async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 3000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** An unused campaign id (the objects are addressed by it; no D1 row is needed for these tests). */
export const campaignId = testCampaignId;

/** A real campaign object for `s`'s agent and configuration, holding `contacts`, ready to start. */
export async function campaignObject(s: Setup, id: number, retry: Partial<RetryConfig>, contacts: ContactInput[], settings: Partial<CampaignSettings> = {}) {
  const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName(String(id)));
  await stub.initialize({
    campaignId: id,
    orgId: s.org.id,
    name: `campaign ${id}`,
    workflowId: s.agent.id,
    telephonyConfigurationId: s.configId,
    sourceId: "campaigns/x.csv",
    settings: { ...DEFAULT_SETTINGS, ...settings, retry_config: { ...DEFAULT_SETTINGS.retry_config, ...retry } } as CampaignSettings,
  });
  await stub.importContacts(contacts);
  await stub.finishImport();
  return stub;
}

/**
 * A real campaign (its D1 row, named `name`, for the routes; its object holds the contacts) of one contact per phone,
 * started, its alarm run until every call is placed; the calls' run records and a reader for them.
 */
export async function placedCampaign(s: Setup, opts: { name: string; agentId: number; phones: string[]; maxConcurrency: number }) {
  const row = await env.DB.prepare(
    "INSERT INTO campaigns (org_id, name, workflow_id, telephony_configuration_id, state, source_id, settings) VALUES (?, ?, ?, ?, 'draft', 'campaigns/x.csv', ?) RETURNING id",
  )
    .bind(s.org.id, opts.name, opts.agentId, s.configId, JSON.stringify(DEFAULT_SETTINGS))
    .first<{ id: number }>();
  const id = row!.id;
  const contacts = opts.phones.map((phone_number, i) => ({ row: i + 2, phone_number, initial_context: CONTEXT, greeting_override: null }));
  const stub = await campaignObject(s, id, { enabled: false }, contacts, { max_concurrency: opts.maxConcurrency, rate_limit: 50 });
  await stub.start();
  const runs = () => getDb(env).select().from(workflowRuns).where(eq(workflowRuns.campaignId, id)).all();
  const placed = await eventually(
    async () => {
      await runDurableObjectAlarm(stub);
      return runs();
    },
    (r) => r.length === opts.phones.length,
    10_000,
  );
  expect(placed).toHaveLength(opts.phones.length);
  return { id, stub, runs, placed };
}

/**
 * A real campaign of one contact, started until its call is placed: its id, its object and the call's run record (which
 * holds no carrier call id before the answer; the object does).
 */
export async function placedCampaignCall(s: Setup) {
  const id = campaignId();
  const stub = await campaignObject(s, id, { enabled: false }, [{ row: 2, phone_number: CALLEE, initial_context: CONTEXT, greeting_override: null }]);
  await stub.start();
  const runOf = async () => (await getDb(env).select().from(workflowRuns).where(eq(workflowRuns.campaignId, id)).all())[0];
  for (let i = 0; i < 5 && !(await runOf()); i++) await runDurableObjectAlarm(stub);
  const run = await runOf();
  expect(run, "the campaign placed its call").toBeDefined();
  return { id, stub, run };
}

/**
 * A started campaign of two contacts dialed one at a time (no retries), and its first run once the engine dialed it
 * (`runs` reads the campaign's runs again).
 */
export async function twoContactCampaign(s: Setup) {
  const id = campaignId();
  const stub = await campaignObject(
    s,
    id,
    { enabled: false },
    [
      { row: 2, phone_number: CALLEE, initial_context: CONTEXT, greeting_override: null },
      { row: 3, phone_number: "+14155550177", initial_context: CONTEXT, greeting_override: null },
    ],
    { max_concurrency: 1 },
  );
  await stub.start();
  const runs = () => getDb(env).select().from(workflowRuns).where(eq(workflowRuns.campaignId, id)).all();
  for (let i = 0; i < 5 && !(await runs()).length; i++) await runDurableObjectAlarm(stub);
  const [first, ...others] = await runs();
  expect(others).toEqual([]);
  return { id, stub, runs, first };
}
