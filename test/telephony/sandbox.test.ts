// The sandbox carrier of local development: a configuration with no credentials whose calls go to the simulator's
// Twilio under its one well-known account, carrying what the simulated callee should do; callbacks come back to the
// sandbox's own URLs, signed as Twilio signs them, and are verified; a deployment (no LOCAL_DEV) neither lists nor
// creates it.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { createExecutionContext } from "cloudflare:test";
import { SANDBOX_ACCOUNT } from "../../src/telephony/providers/sandbox/calls";
import { SANDBOX_CREDENTIALS } from "../../src/dev/simulator/sandbox";
import { call, createOrg } from "../helpers";
import { CALLEE, CALLER, createAgent, deliver, deliverAll, eventually, play, runRow, sim, type Recorded } from "../calls/support";

async function sandboxSetup(config: Record<string, unknown> = {}) {
  const org = await createOrg();
  const created = await call("POST", "/api/v1/organizations/telephony-configs", {
    key: org.key,
    body: { name: `sandbox-${crypto.randomUUID()}`, is_default_outbound: true, config: { provider: "sandbox", ...config } },
  });
  expect(created.status, created.text).toBe(200);
  const num = await call("POST", `/api/v1/organizations/telephony-configs/${created.json.id}/phone-numbers`, {
    key: org.key,
    body: { address: CALLER, is_default_caller_id: true },
  });
  expect(num.status, num.text).toBe(200);
  return { org, config: created.json, agent: await createAgent(org) };
}

async function placeCall(s: Awaited<ReturnType<typeof sandboxSetup>>) {
  const res = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
    key: s.org.key,
    body: { phone_number: CALLEE, initial_context: { first_name: "Ada" } },
  });
  expect(res.status, res.text).toBe(200);
  return res.json.workflow_run_id as number;
}

describe("the sandbox carrier", () => {
  it("needs no credentials, is ready once it has a caller ID, and the simulator shares its well-known account", async () => {
    expect(SANDBOX_ACCOUNT).toEqual(SANDBOX_CREDENTIALS);
    const s = await sandboxSetup();
    const read = await call("GET", `/api/v1/organizations/telephony-configs/${s.config.id}`, { key: s.org.key });
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ provider: "sandbox", credentials: { callee: "answered", answer_after_ms: 1500 } });
    expect(read.json.setup_checklist.ready_for_outbound).toBe(true);
    const providers = await call("GET", "/api/v1/organizations/telephony-providers", { key: s.org.key });
    expect(providers.json.items.map((p: { name: string }) => p.name)).toContain("sandbox");
  });

  it("places the call on the simulator's Twilio with the callee's plan, and its signed callbacks complete the run", async () => {
    // A long ring: the test plays the callee itself (the simulator's own timer would deliver to an unreachable host).
    const s = await sandboxSetup({ callee: "answered", answer_after_ms: 30000 });
    const runId = await placeCall(s);
    const run = await runRow(runId);
    expect(run).toMatchObject({ provider: "sandbox", status: "initiated" });
    const requests = await sim<Recorded[]>("GET", "/accounts/sandbox/requests");
    const create = requests.find((r) => r.method === "POST" && new URLSearchParams(r.body).get("Url")?.includes(`/${runId}/`));
    expect(create?.path).toBe(`/2010-04-01/Accounts/${SANDBOX_CREDENTIALS.account_sid}/Calls.json`);
    const form = new URLSearchParams(create!.body);
    expect(form.get("SandboxCallee")).toBe("answered");
    expect(form.get("SandboxAnswerAfterMs")).toBe("30000");
    expect(form.get("StatusCallback")).toMatch(/^http:\/\/edgedial\.test\/api\/v1\/telephony\/sandbox\//);

    const callbacks = await play(run.providerCallId!, "answered");
    // A forged signature is refused before anything changes.
    const first = callbacks.find((c) => c.kind === "status")!;
    expect((await deliver(first, { headers: { "X-Twilio-Signature": "forged" } })).status).toBe(403);
    await deliverAll(callbacks);
    const done = await eventually(
      () => runRow(runId),
      (r) => r.status === "completed",
    );
    expect(done).toMatchObject({ status: "completed", provider: "sandbox" });
  });

  it("is neither listed nor created on a deployment (no LOCAL_DEV)", async () => {
    const org = await createOrg();
    const deployed = { ...env, LOCAL_DEV: "", PUBLIC_BASE_URL: "https://dial.example.com" } as unknown as Env;
    const req = (path: string, init: RequestInit = {}) =>
      worker.fetch(
        new Request(`https://dial.example.com${path}`, { ...init, headers: { "X-API-Key": org.key, "Content-Type": "application/json" } }),
        deployed,
        createExecutionContext(),
      );
    const list = await (await req("/api/v1/organizations/telephony-providers")).json<{ items: { name: string }[] }>();
    expect(list.items.map((p) => p.name)).not.toContain("sandbox");
    expect(list.items.length).toBeGreaterThan(0);
    const res = await req("/api/v1/organizations/telephony-configs", {
      method: "POST",
      body: JSON.stringify({ name: "nope", config: { provider: "sandbox" } }),
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).toContain("available only in local development");
  });
});
