// SSRF at connect time: an ari endpoint saved while the organization allowed private PBX addresses is not
// fetched once the setting is off; a PBX that cannot be reached is reported generically, the details only logged.
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { call, createOrg, type Org } from "../helpers";
import { ariCalls } from "../../src/telephony/providers/ari/calls";
import type { ConfigContext, ProviderEnv } from "../../src/telephony/providers/types";
import { CALLEE, CONTEXT, createAgent, setup, simHang, simRefuse } from "./support";

const POLICY = "/api/v1/organizations/calling-policy";

async function privatePbx(endpoint: string): Promise<{ org: Org; uuid: string }> {
  const org = await createOrg();
  expect((await call("PUT", POLICY, { key: org.key, body: { allow_private_pbx: true } })).status).toBe(200);
  const cfg = await call("POST", "/api/v1/organizations/telephony-configs", {
    key: org.key,
    body: { name: "pbx", is_default_outbound: true, config: { provider: "ari", ari_endpoint: endpoint, app_name: "edgedial", app_password: "pw-0001" } },
  });
  expect(cfg.status, cfg.text).toBe(200);
  return { org, uuid: (await createAgent(org)).workflow_uuid };
}
const dial = (s: { org: Org; uuid: string }) =>
  call("POST", `/api/v1/public/agent/${s.uuid}`, { key: s.org.key, body: { phone_number: "1001", initial_context: CONTEXT } });

describe("ari private endpoints at connect time", () => {
  it("a private endpoint is not connected to once allow_private_pbx is turned off: the call fails naming the setting", async () => {
    const s = await privatePbx("http://10.255.0.1:8088");
    expect((await call("PUT", POLICY, { key: s.org.key, body: { allow_private_pbx: false } })).status).toBe(200);
    const res = await dial(s);
    expect(res.status).toBe(502);
    expect(res.json.detail).toMatch(/ari_endpoint refused: .*allow_private_pbx/);
  });

  it("an unreachable PBX is 'Could not reach the PBX' to the caller, events socket or originate; the network error is only logged", async () => {
    const logged = vi.spyOn(console, "error");
    try {
      const s = await setup("ari");
      await simRefuse(s.acct, "events");
      const res = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
        key: s.org.key,
        body: { phone_number: CALLEE, initial_context: CONTEXT },
      });
      expect(res.status).toBe(502);
      expect(res.json.detail).toBe("ARI events connection failed: Could not reach the PBX");
      await simRefuse(s.acct, "originate", 3);
      const again = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
        key: s.org.key,
        body: { phone_number: CALLEE, initial_context: CONTEXT },
      });
      expect(again.status).toBe(502);
      expect(again.json.detail).toBe("Could not reach the PBX");
      const lines = logged.mock.calls.map((c) => String(c[0]));
      expect(lines.some((l) => l.includes("ARI events WebSocket unreachable") && l.includes("ECONNREFUSED"))).toBe(true);
      expect(lines.some((l) => l.includes("ARI originate unreachable") && l.includes("ECONNREFUSED"))).toBe(true);
    } finally {
      logged.mockRestore();
    }
  });

  it("a PBX that refuses and one that never answers look the same to the caller (originate and verify): no port probing by timing out", {
    timeout: 30_000,
  }, async () => {
    const timeoutMs = Number((env as unknown as { CARRIER_TIMEOUT_MS?: string }).CARRIER_TIMEOUT_MS);
    const logged = vi.spyOn(console, "error");
    try {
      const s = await setup("ari");
      const configId = (await call("GET", "/api/v1/organizations/telephony-configs", { key: s.org.key })).json.items[0].id;
      const verify = () => call("POST", `/api/v1/organizations/telephony-configs/${configId}/verify`, { key: s.org.key });
      const dialNow = () =>
        call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, { key: s.org.key, body: { phone_number: CALLEE, initial_context: CONTEXT } });

      await simRefuse(s.acct, "originate", 3);
      const refusedDial = await dialNow();
      await simHang(s.acct, "originate", timeoutMs * 3);
      const silentDial = await dialNow();
      expect([refusedDial.status, silentDial.status]).toEqual([502, 502]);
      expect(silentDial.json).toEqual(refusedDial.json);
      expect(refusedDial.json.detail).toBe("Could not reach the PBX");

      // (A failed verify marks the credentials step incomplete, so it comes after the dials.)
      await simRefuse(s.acct, "info");
      const refusedVerify = await verify();
      await simHang(s.acct, "info", timeoutMs * 3);
      const silentVerify = await verify();
      expect([refusedVerify.status, silentVerify.status]).toEqual([200, 200]);
      expect(refusedVerify.json.message).toBe("Could not reach the PBX");
      expect(silentVerify.json.message).toBe(refusedVerify.json.message);
      // The difference is kept for the operator, in the log.
      const lines = logged.mock.calls.map((c) => String(c[0]));
      expect(lines.some((l) => l.includes("ARI originate unreachable") && l.includes("timed out"))).toBe(true);
      expect(lines.some((l) => l.includes("ARI verify unreachable") && l.includes("timed out"))).toBe(true);
    } finally {
      logged.mockRestore();
    }
  });

  it("verify checks the endpoint again: saved while allowed, refused once the policy is off, without a request", async () => {
    const s = await privatePbx("http://10.255.0.1:8088");
    const configId = (await call("GET", "/api/v1/organizations/telephony-configs", { key: s.org.key })).json.items[0].id;
    expect((await call("PUT", POLICY, { key: s.org.key, body: { allow_private_pbx: false } })).status).toBe(200);
    const res = await call("POST", `/api/v1/organizations/telephony-configs/${configId}/verify`, { key: s.org.key });
    expect(res.status).toBe(200);
    expect(res.json.ok).toBe(false);
    // Refused by the guard (a fetch to that address would have been "Could not reach the PBX" after the timeout).
    expect(res.json.message).toMatch(/^ari_endpoint refused: .*allow_private_pbx/);
  });

  it("every ARI request is guarded at fetch time: originate, hang-up and verify refuse a private endpoint the context does not allow", async () => {
    const ctx = (allowPrivatePbx?: boolean): ConfigContext => ({
      id: 1,
      orgId: 1,
      state: {},
      activeNumbers: [],
      allowPrivatePbx,
      config: { provider: "ari", ari_endpoint: "http://127.0.0.1:8088", app_name: "edgedial", app_password: "pw-0001" },
    });
    const fetched: string[] = [];
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      fetched.push(String(input instanceof Request ? input.url : input));
      throw new Error("connect ECONNREFUSED 127.0.0.1:8088");
    });
    const penv = { baseUrls: {}, carrierTimeoutMs: 1000 } as unknown as ProviderEnv;
    try {
      for (const c of [ctx(undefined), ctx(false)]) {
        const placed = await ariCalls.originate(c, penv, { runId: 7, to: "1001", from: null, answerUrl: "", statusUrl: "" } as never);
        expect(placed).toMatchObject({ ok: false, message: expect.stringMatching(/^ari_endpoint refused: .*loopback/) });
        await expect(ariCalls.hangup(c, penv, "edgedial-7")).rejects.toThrow(/ari_endpoint refused/);
        expect(await ariCalls.verifyCredentials!(c, penv)).toMatchObject({ ok: false, message: expect.stringMatching(/^ari_endpoint refused/) });
      }
      expect(fetched).toEqual([]);
      // Allowed: the request is made (and here fails to connect, generically).
      expect(await ariCalls.verifyCredentials!(ctx(true), penv)).toEqual({ ok: false, message: "Could not reach the PBX" });
      expect(fetched).toEqual(["http://127.0.0.1:8088/ari/asterisk/info"]);
    } finally {
      spy.mockRestore();
    }
  });
});
