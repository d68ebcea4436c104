// POST /organizations/telephony-configs/{id}/verify: one read-only carrier request, answered by the carrier
// simulator (which checks auth like the real API), recorded on the `credentials` checklist step.
import { describe, expect, it } from "vitest";
import { createOrg, type Org } from "../helpers";
import { configFor, simAccount, type SimAccount } from "../calls/support";
import type { ProviderName } from "../../src/telephony/providers/types";
import { api, canary, CONFIGS, configRow } from "./support";

const VERIFIABLE: ProviderName[] = ["twilio", "plivo", "vobiz", "telnyx", "exotel", "ari", "cloudonix", "vonage"];
const SECRET: Partial<Record<ProviderName, string>> = {
  twilio: "auth_token",
  plivo: "auth_token",
  vobiz: "auth_token",
  telnyx: "api_key",
  exotel: "api_token",
  ari: "app_password",
  cloudonix: "bearer_token",
  vonage: "private_key",
};

/** A wrong value of the provider's secret: any text, or for Vonage's private key another application's key. */
async function wrongSecret(provider: ProviderName): Promise<string> {
  return provider === "vonage" ? (await simAccount("vonage")).credentials.private_key : canary("wrong");
}

async function configure(org: Org, acct: SimAccount, extra: Record<string, unknown> = {}) {
  const res = await api("POST", CONFIGS, { key: org.key, body: { name: `${acct.provider}-${crypto.randomUUID()}`, config: configFor(acct, extra) } });
  expect(res.status, res.text).toBe(200);
  return res.json.id as number;
}

const credentialsStep = (view: any) => view.setup_checklist.steps.find((s: any) => s.key === "credentials");

describe.each(VERIFIABLE)("verify credentials: %s", (provider) => {
  it("good credentials: ok, recorded in the state, the step is complete", async () => {
    const org = await createOrg();
    const acct = await simAccount(provider);
    const id = await configure(org, acct);
    const res = await api("POST", `${CONFIGS}/${id}/verify`, { key: org.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.ok).toBe(true);
    expect(res.json.message).toBeNull();
    expect(Date.parse(res.json.verified_at)).not.toBeNaN();
    expect(res.json.configuration.id).toBe(id);
    expect(credentialsStep(res.json.configuration).complete).toBe(true);
    expect(res.json.configuration.setup_checklist.steps.length).toBeGreaterThan(0);
    const state = (await configRow(id))!.state as Record<string, unknown>;
    expect(state.credentials_verified_at).toBe(res.json.verified_at);
    expect(state.credentials_error).toBeUndefined();
  });

  it("a wrong secret: not ok, the step is incomplete with the carrier's message, no secret echoed; fixing it clears the error", async () => {
    const org = await createOrg();
    const acct = await simAccount(provider);
    const wrong = await wrongSecret(provider);
    const id = await configure(org, acct, { [SECRET[provider]!]: wrong });
    const res = await api("POST", `${CONFIGS}/${id}/verify`, { key: org.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.ok).toBe(false);
    expect(res.json.message).toMatch(/rejected the credentials \(HTTP 401\)/);
    const step = credentialsStep(res.json.configuration);
    expect(step.complete).toBe(false);
    expect(step.description).toContain(res.json.message);
    expect(res.json.configuration.setup_checklist.ready_for_outbound).toBe(false);
    expect(res.text).not.toContain(acct.credentials[SECRET[provider]!]);
    // The step stays incomplete on a later read.
    const read = await api("GET", `${CONFIGS}/${id}`, { key: org.key });
    expect(credentialsStep(read.json).complete).toBe(false);
    // Saving the right secret drops the stale result; verifying again succeeds.
    const put = await api("PUT", `${CONFIGS}/${id}`, {
      key: org.key,
      body: { config: { provider, [SECRET[provider]!]: acct.credentials[SECRET[provider]!] } },
    });
    expect(put.status, put.text).toBe(200);
    expect(credentialsStep(put.json).complete).toBe(true);
    const again = await api("POST", `${CONFIGS}/${id}/verify`, { key: org.key });
    expect(again.json.ok).toBe(true);
    expect(credentialsStep(again.json.configuration).complete).toBe(true);
  });
});

describe("verify credentials: scope and unsupported providers", () => {
  it("another organization's configuration is a 404; a non-numeric id is a 404", async () => {
    const [a, b] = [await createOrg(), await createOrg()];
    const id = await configure(a, await simAccount("twilio"));
    const res = await api("POST", `${CONFIGS}/${id}/verify`, { key: b.key });
    expect(res.status, res.text).toBe(404);
    expect(res.json.detail).toBeTruthy();
    expect((await configRow(id))!.state).not.toHaveProperty("credentials_verified_at");
    expect((await api("POST", `${CONFIGS}/abc/verify`, { key: a.key })).status).toBe(404);
  });
});
