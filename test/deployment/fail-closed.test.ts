// A deployment missing a required setting fails closed with a clear message: health answers 503
// `degraded` listing the missing names (never values); every operation needing a missing setting answers 503 naming
// it and how to set it, writing nothing; a campaign refuses to start (409). The Worker runs here with the test
// pool's bindings minus what each case removes, as a deployed Worker (no LOCAL_DEV) unless a case says otherwise.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { createOrg, type Org } from "../helpers";
import { CALLEE, play, runRow, setup } from "../calls/support";
import { draftCampaign, setupOrg } from "../campaigns/support";
import { resetWorld } from "../campaigns/engine-harness";
import { unwrap } from "../../src/campaigns/errors";

const ORIGIN = "https://dial.example.com";
/** A deployed Worker as it should be: an https origin, every secret, no LOCAL_DEV. */
const DEPLOYED: Partial<Env> = { PUBLIC_BASE_URL: ORIGIN, LOCAL_DEV: "" };

type Opts = { key?: string; body?: unknown; raw?: string; headers?: Record<string, string>; url?: string };

/** Calls the Worker with `overrides` on top of the pool's bindings. */
async function callWith(overrides: Partial<Env>, method: string, path: string, opts: Opts = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers["X-API-Key"] = opts.key;
  const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  if (opts.body !== undefined && !headers["Content-Type"]) headers["Content-Type"] = "application/json";
  const res = await worker.fetch(
    new Request(opts.url ?? `${ORIGIN}${path}`, { method, headers, body }),
    { ...env, ...overrides } as Env,
    createExecutionContext(),
  );
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
}

const health = (overrides: Partial<Env>) => callWith(overrides, "GET", "/api/v1/health");

/** No secret value of the pool ever appears in a response. */
function expectNoValues(text: string) {
  for (const v of [env.ENCRYPTION_KEYS, env.CALLBACK_SECRET, env.UPLOAD_SIGNING_SECRET]) expect(text).not.toContain(v);
}

describe("health names what the deployment lacks", () => {
  it("is ok for a complete deployment, with an empty `missing`", async () => {
    const res = await health(DEPLOYED);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: "ok", backend_api_endpoint: ORIGIN, missing: [] });
  });

  it.each([
    ["ENCRYPTION_KEYS", { ENCRYPTION_KEYS: "" }],
    ["ENCRYPTION_KEYS", { ENCRYPTION_KEYS: "not-a-keyring" }],
    ["ENCRYPTION_KEYS", { ENCRYPTION_KEYS: "k1:c2hvcnQ=" }],
    ["CALLBACK_SECRET", { CALLBACK_SECRET: "" }],
    ["CALLBACK_SECRET", { CALLBACK_SECRET: undefined }],
    ["UPLOAD_SIGNING_SECRET", { UPLOAD_SIGNING_SECRET: " " }],
    ["PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "" }],
    ["PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "http://dial.example.com" }],
    ["PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "dial.example.com" }],
    ["PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "https://dial.example.com/edgedial" }],
    ["PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "https://user:pw@dial.example.com" }],
  ] as Array<[string, Partial<Env>]>)("503 degraded naming %s when it is %j", async (name, broken) => {
    const res = await health({ ...DEPLOYED, ...broken });
    expect(res.status).toBe(503);
    expect(res.json).toMatchObject({ status: "degraded", missing: [name] });
    expectNoValues(res.text);
    expect(res.text).not.toContain("pw@");
  });

  it("lists every missing item at once, with names only", async () => {
    const res = await health({ PUBLIC_BASE_URL: "", LOCAL_DEV: "", ENCRYPTION_KEYS: "", CALLBACK_SECRET: "", UPLOAD_SIGNING_SECRET: "" });
    expect(res.status).toBe(503);
    expect(res.json.missing).toEqual(["PUBLIC_BASE_URL", "ENCRYPTION_KEYS", "CALLBACK_SECRET", "UPLOAD_SIGNING_SECRET"]);
  });

  it("allows http:// and an empty base (the request's origin) only in local development", async () => {
    expect((await health({ PUBLIC_BASE_URL: "http://127.0.0.1:8787", LOCAL_DEV: "true" })).status).toBe(200);
    const empty = await health({ PUBLIC_BASE_URL: "", LOCAL_DEV: "true" });
    expect(empty.status).toBe(200);
    expect(empty.json.backend_api_endpoint).toBe(ORIGIN);
    expect((await health({ PUBLIC_BASE_URL: "http://127.0.0.1:8787", LOCAL_DEV: "" })).json.missing).toEqual(["PUBLIC_BASE_URL"]);
  });

  it("reports the normalized base", async () => {
    const res = await health({ ...DEPLOYED, PUBLIC_BASE_URL: "HTTPS://Dial.Example.com:443//" });
    expect(res.status).toBe(200);
    expect(res.json.backend_api_endpoint).toBe(ORIGIN);
  });
});

describe("operations that need a missing setting answer 503 naming it, and write nothing", () => {
  let org: Org;
  beforeAll(async () => {
    org = await createOrg();
  });

  const twilio = (name: string) => ({ name, config: { provider: "twilio", account_sid: `AC${"a".repeat(32)}`, auth_token: "b".repeat(32) } });
  const configNames = async () =>
    (await callWith(DEPLOYED, "GET", "/api/v1/organizations/telephony-configs", { key: org.key })).json.items.map((i: { name: string }) => i.name);

  it.each([
    ["missing", ""],
    ["malformed", "k1:c2hvcnQ="],
  ])("telephony configuration create with ENCRYPTION_KEYS %s", async (_what, value) => {
    const res = await callWith({ ...DEPLOYED, ENCRYPTION_KEYS: value }, "POST", "/api/v1/organizations/telephony-configs", {
      key: org.key,
      body: twilio(`t-${value}`),
    });
    expect(res.status, res.text).toBe(503);
    expect(res.json.detail).toContain("ENCRYPTION_KEYS");
    expect(res.json.detail).toContain("wrangler secret put ENCRYPTION_KEYS");
    expectNoValues(res.text);
    expect(await configNames()).not.toContain(`t-${value}`);
  });

  it("telephony configuration update with ENCRYPTION_KEYS missing; a rename-free credential change needs it", async () => {
    const created = await callWith(DEPLOYED, "POST", "/api/v1/organizations/telephony-configs", { key: org.key, body: twilio("to-update") });
    expect(created.status, created.text).toBe(200);
    const res = await callWith({ ...DEPLOYED, ENCRYPTION_KEYS: "" }, "PUT", `/api/v1/organizations/telephony-configs/${created.json.id}`, {
      key: org.key,
      body: { config: { auth_token: "c".repeat(32) } },
    });
    expect(res.status, res.text).toBe(503);
    expect(res.json.detail).toContain("ENCRYPTION_KEYS");
  });

  it("a configuration that provisions its carrier application needs PUBLIC_BASE_URL", async () => {
    const res = await callWith({ ...DEPLOYED, PUBLIC_BASE_URL: "" }, "POST", "/api/v1/organizations/telephony-configs", {
      key: org.key,
      body: { name: "plivo-no-base", config: { provider: "plivo", auth_id: "MA" + "A".repeat(18), auth_token: "t".repeat(40) } },
    });
    expect(res.status, res.text).toBe(503);
    expect(res.json.detail).toContain("PUBLIC_BASE_URL is not set");
    expect(await configNames()).not.toContain("plivo-no-base");
  });

  it("presign and the signed upload route without UPLOAD_SIGNING_SECRET (no R2 S3 credentials)", async () => {
    const presign = await callWith({ ...DEPLOYED, UPLOAD_SIGNING_SECRET: "" }, "POST", "/api/v1/s3/presigned-upload-url", {
      key: org.key,
      body: { file_name: "a.csv", file_size: 5, content_type: "text/csv" },
    });
    expect(presign.status, presign.text).toBe(503);
    expect(presign.json.detail).toContain("wrangler secret put UPLOAD_SIGNING_SECRET");

    const ok = await callWith(DEPLOYED, "POST", "/api/v1/s3/presigned-upload-url", {
      key: org.key,
      body: { file_name: "a.csv", file_size: 5, content_type: "text/csv" },
    });
    expect(ok.status).toBe(200);
    const put = await callWith({ ...DEPLOYED, UPLOAD_SIGNING_SECRET: "" }, "PUT", "", {
      url: ok.json.upload_url,
      raw: "a,b\n1",
      headers: { "Content-Type": "text/csv" },
    });
    expect(put.status, put.text).toBe(503);
    expect(put.json.detail).toContain("UPLOAD_SIGNING_SECRET");
    expect(await env.UPLOADS.head(ok.json.file_key)).toBeNull();
  });

  it.each([
    ["CALLBACK_SECRET", { CALLBACK_SECRET: "" }, "wrangler secret put CALLBACK_SECRET"],
    ["ENCRYPTION_KEYS", { ENCRYPTION_KEYS: "" }, "wrangler secret put ENCRYPTION_KEYS"],
    ["PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "" }, "PUBLIC_BASE_URL is not set"],
    ["PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "http://dial.example.com" }, "PUBLIC_BASE_URL must start with https://"],
  ] as Array<[string, Partial<Env>, string]>)("a single call without %s: 503, no run, no carrier request", async (_name, broken, says) => {
    const s = await setup("twilio");
    const res = await callWith({ ...DEPLOYED, ...broken }, "POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: s.org.key,
      body: { phone_number: CALLEE, initial_context: { first_name: "Ada" } },
    });
    expect(res.status, res.text).toBe(503);
    expect(res.json.detail).toContain(says);
    expectNoValues(res.text);
    const runs = await callWith(DEPLOYED, "GET", `/api/v1/workflow/${s.agent.id}/runs`, { key: s.org.key });
    expect(runs.json.items).toEqual([]);
  });

  it("a carrier callback while a setting is missing: 503 (the carrier retries), the run unchanged", async () => {
    const s = await setup("twilio");
    const start = await callWith(DEPLOYED, "POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: s.org.key,
      body: { phone_number: CALLEE, initial_context: { first_name: "Ada" } },
    });
    expect(start.status, start.text).toBe(200);
    const runId = start.json.workflow_run_id;
    const before = await runRow(runId);
    const status = (await play(before.providerCallId!, "busy")).filter((c) => c.kind === "status").at(-1)!;
    const deliver = (overrides: Partial<Env>) => callWith(overrides, status.method, "", { url: status.url, raw: status.body, headers: status.headers });
    for (const broken of [{ ENCRYPTION_KEYS: "" }, { CALLBACK_SECRET: "" }, { PUBLIC_BASE_URL: "" }]) {
      const res = await deliver({ ...DEPLOYED, ...broken });
      expect(res.status, res.text).toBe(503);
      expect(await runRow(runId)).toEqual(before);
    }
    expect((await deliver(DEPLOYED)).status).toBe(204);
    expect((await runRow(runId)).status).toBe("busy");
  });
});

describe("a campaign does not start on a deployment that cannot place calls", () => {
  // The engine's calls go to a fake carrier (a started campaign dials at once).
  beforeEach(() => {
    resetWorld();
  });

  it.each([
    ["CALLBACK_SECRET", { CALLBACK_SECRET: "" }],
    ["PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "" }],
    ["ENCRYPTION_KEYS", { ENCRYPTION_KEYS: "" }],
  ] as Array<[string, Partial<Env>]>)("start answers 409 naming %s; the campaign stays a draft", async (name, broken) => {
    const w = await setupOrg();
    const { id, stub } = await draftCampaign(w);
    const res = await callWith({ ...DEPLOYED, ...broken }, "POST", `/api/v1/campaign/${id}/start`, { key: w.org.key });
    expect(res.status, res.text).toBe(409);
    expect(res.json.detail).toContain(name);
    expect(unwrap(await stub.snapshot()).state).toBe("draft");
  });

  it("in local development a campaign needs PUBLIC_BASE_URL too (its calls have no request origin)", async () => {
    const w = await setupOrg();
    const { id, stub } = await draftCampaign(w);
    const res = await callWith({ PUBLIC_BASE_URL: "", LOCAL_DEV: "true" }, "POST", `/api/v1/campaign/${id}/start`, { key: w.org.key });
    expect(res.status, res.text).toBe(409);
    expect(res.json.detail).toContain("PUBLIC_BASE_URL is not set");
    expect(unwrap(await stub.snapshot()).state).toBe("draft");
  });

  it("starts once the deployment is complete", async () => {
    const w = await setupOrg();
    const { id } = await draftCampaign(w);
    const res = await callWith(DEPLOYED, "POST", `/api/v1/campaign/${id}/start`, { key: w.org.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.state).toBe("running");
  });
});
