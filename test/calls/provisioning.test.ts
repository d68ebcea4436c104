// Auto-provisioning on save for cloudonix, plivo, telnyx and vobiz against the simulator:
// the carrier application is created when its id is omitted, a repeat finds it instead of creating a second,
// and a carrier failure keeps the configuration with the carrier's message until the next update retries (a number
// given an inbound agent meanwhile is a 409: there is no application to point at the agent).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { PROVIDERS } from "../../src/telephony/providers/registry";
import { loadConfigContext } from "../../src/telephony/resolve";
import { providerEnvOf } from "../../src/telephony/provisioning";
import type { ProviderName } from "../../src/telephony/providers/types";
import { call, createOrg } from "../helpers";
import { configFor, sim, simAccount, simFault, simRequests, type SimAccount } from "./support";
import { configRow } from "../telephony/support";

const FIELD: Partial<Record<ProviderName, string>> = {
  plivo: "application_id",
  vobiz: "application_id",
  telnyx: "connection_id",
  cloudonix: "application_name",
};
const CONFIGS = "/api/v1/organizations/telephony-configs";
const applications = (acct: SimAccount) => sim<Array<{ id: string; name: string; url: string }>>("GET", `/accounts/${acct.id}/applications`);
const AGENT = {
  nodes: [
    { id: "s", type: "startCall", data: { prompt: "Hi" } },
    { id: "e", type: "endCall", data: { prompt: "Bye" } },
  ],
  edges: [{ id: "se", source: "s", target: "e" }],
};
const stepOf = (json: any) => json.setup_checklist.steps.find((s: { key: string }) => s.key === "application");

describe.each(Object.entries(FIELD) as Array<[ProviderName, string]>)("%s", (provider, field) => {
  it("creates the carrier application on save when its id is omitted, once", async () => {
    const org = await createOrg();
    const acct = await simAccount(provider);
    const created = await call("POST", CONFIGS, { key: org.key, body: { name: "auto", config: configFor(acct) } });
    expect(created.status, created.text).toBe(200);
    const apps = await applications(acct);
    expect(apps).toHaveLength(1);
    expect(apps[0].name).toBe(`edgedial-${created.json.id}`);
    // The application answers on our inbound URL (a hang-up until inbound agents exist).
    expect(apps[0].url).toBe(`http://edgedial.test/api/v1/telephony/${provider}/inbound`);
    const inbound = await call("POST", `/api/v1/telephony/${provider}/inbound`, { raw: "" });
    expect(inbound.status).toBe(200);
    expect(created.json.credentials[field]).toBe(provider === "cloudonix" ? apps[0].name : apps[0].id);
    expect(stepOf(created.json)).toMatchObject({ complete: true, blocks_outbound: true });

    // Saving again does not create another.
    const again = await call("PUT", `${CONFIGS}/${created.json.id}`, { key: org.key, body: { config: { [field]: null } } });
    expect(again.status, again.text).toBe(200);
    expect(again.json.credentials[field]).toBe(created.json.credentials[field]);
    expect(await applications(acct)).toHaveLength(1);
  });

  it("is safe to repeat when the carrier already has the application (an earlier save that was not recorded)", async () => {
    const org = await createOrg();
    const acct = await simAccount(provider);
    const created = await call("POST", CONFIGS, { key: org.key, body: { name: "auto", config: configFor(acct) } });
    const ctx = await loadConfigContext(env, (await configRow(created.json.id))!);
    delete ctx.config[field];
    const penv = providerEnvOf(env, "http://edgedial.test/");
    const a = await PROVIDERS[provider].provision!(ctx, penv);
    const b = await PROVIDERS[provider].provision!(ctx, penv);
    expect(a.config?.[field]).toBe(created.json.credentials[field]);
    expect(b).toEqual(a);
    expect(await applications(acct)).toHaveLength(1);
    // A configuration that names its application is left alone: no carrier request at all.
    const before = (await simRequests(acct)).length;
    expect(await PROVIDERS[provider].provision!({ ...ctx, config: { ...ctx.config, [field]: "given" } }, penv)).toEqual({ state: {} });
    expect((await simRequests(acct)).length).toBe(before);
  });

  it("keeps the configuration when the carrier fails, shows its message, and retries on the next update", async () => {
    const org = await createOrg();
    const acct = await simAccount(provider);
    await simFault(acct, "provision", 503, "provisioning backend unavailable");
    const created = await call("POST", CONFIGS, { key: org.key, body: { name: "auto", config: configFor(acct) } });
    expect(created.status, created.text).toBe(200);
    expect(created.json.credentials[field] ?? null).toBeNull();
    const step = stepOf(created.json);
    expect(step).toMatchObject({ complete: false, blocks_outbound: true });
    expect(step.description).toContain("provisioning backend unavailable");
    expect(step.description).toContain("503");
    expect(created.json.setup_checklist.ready_for_outbound).toBe(false);
    expect(await applications(acct)).toHaveLength(0);

    // A number given an agent cannot be routed to a missing application: a 409 that asked nothing of the carrier
    // (not a 502, which says the carrier refused), and no number saved.
    const agent = await call("POST", "/api/v1/workflow/create", { key: org.key, body: { name: "inbound", workflow_definition: AGENT } });
    const asked = (await simRequests(acct)).length;
    const numbers = `${CONFIGS}/${created.json.id}/phone-numbers`;
    const added = await call("POST", numbers, { key: org.key, body: { address: "+14155550188", inbound_workflow_id: agent.json.id } });
    expect(added.status, added.text).toBe(409);
    expect(added.json.detail).toMatch(/has no (Call Control |voice )?application yet/);
    expect((await simRequests(acct)).length).toBe(asked);
    expect((await call("GET", numbers, { key: org.key })).json.items.map((n: { address: string }) => n.address)).not.toContain("+14155550188");

    const retried = await call("PUT", `${CONFIGS}/${created.json.id}`, { key: org.key, body: { config: { [field]: null } } });
    expect(retried.status, retried.text).toBe(200);
    expect(stepOf(retried.json)).toMatchObject({ complete: true });
    expect(stepOf(retried.json).description).not.toContain("provisioning backend unavailable");
    expect(await applications(acct)).toHaveLength(1);
  });

  it("reports bad credentials in the carrier's words", async () => {
    const org = await createOrg();
    const acct = await simAccount(provider);
    const cfg = configFor(acct);
    for (const k of ["auth_token", "api_key", "bearer_token"]) if (k in cfg) cfg[k] = "wrong";
    const created = await call("POST", CONFIGS, { key: org.key, body: { name: "auto", config: cfg } });
    expect(created.status).toBe(200);
    expect(stepOf(created.json).description).toMatch(/401/);
  });
});
