// The organization's default configuration, phone numbers, the readiness checklist, deletion rules.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callerIdOf, resolveTelephonyConfig } from "../../src/telephony/resolve";
import { createOrg } from "../helpers";
import { api, CONFIGS, FIXTURES } from "./support";

const config = (provider: string) => FIXTURES.find((f) => f.provider === provider)!.config();
const numbersOf = (id: number) => `${CONFIGS}/${id}/phone-numbers`;

async function defaults(orgId: number): Promise<number[]> {
  const r = await env.DB.prepare("SELECT id FROM telephony_configs WHERE org_id = ? AND is_default_outbound = 1").bind(orgId).all<{ id: number }>();
  return r.results.map((x) => x.id);
}

async function insertCampaign(orgId: number, configId: number, state: string): Promise<number> {
  const wf = await env.DB.prepare("INSERT INTO workflows (org_id, uuid, name) VALUES (?, ?, 'wf') RETURNING id")
    .bind(orgId, crypto.randomUUID())
    .first<{ id: number }>();
  const c = await env.DB.prepare(
    "INSERT INTO campaigns (org_id, name, workflow_id, telephony_configuration_id, state, source_id, settings) VALUES (?, 'c', ?, ?, ?, 'k', '{}') RETURNING id",
  )
    .bind(orgId, wf!.id, configId, state)
    .first<{ id: number }>();
  return c!.id;
}

describe("default configuration", () => {
  it("setting a default clears the previous one, on create and on update", async () => {
    const org = await createOrg();
    const a = (await api("POST", CONFIGS, { key: org.key, body: { name: "a", is_default_outbound: true, config: config("twilio") } })).json;
    expect(a.is_default_outbound).toBe(true);
    const b = (await api("POST", CONFIGS, { key: org.key, body: { name: "b", is_default_outbound: true, config: config("plivo") } })).json;
    expect(b.is_default_outbound).toBe(true);
    expect(await defaults(org.id)).toEqual([b.id]);
    expect((await api("GET", `${CONFIGS}/${a.id}`, { key: org.key })).json.is_default_outbound).toBe(false);

    const back = await api("PUT", `${CONFIGS}/${a.id}`, { key: org.key, body: { is_default_outbound: true } });
    expect(back.json.is_default_outbound).toBe(true);
    expect(await defaults(org.id)).toEqual([a.id]);

    const unset = await api("PUT", `${CONFIGS}/${a.id}`, { key: org.key, body: { is_default_outbound: false } });
    expect(unset.json.is_default_outbound).toBe(false);
    expect(await defaults(org.id)).toEqual([]);
  });

  it("two concurrent creates that both ask to be default leave exactly one default", async () => {
    const org = await createOrg();
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        api("POST", CONFIGS, { key: org.key, body: { name: `race-${i}`, is_default_outbound: true, config: config("twilio") } }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const d = await defaults(org.id);
    expect(d).toHaveLength(1);
    expect(results.map((r) => r.json.id)).toContain(d[0]);
    // and two concurrent updates
    const [x, y] = results.map((r) => r.json.id);
    await Promise.all([x, y].map((id) => api("PUT", `${CONFIGS}/${id}`, { key: org.key, body: { is_default_outbound: true } })));
    expect(await defaults(org.id)).toHaveLength(1);
  });

  it("concurrent partial updates of different fields both land", async () => {
    const org = await createOrg();
    const c = (await api("POST", CONFIGS, { key: org.key, body: { name: "merge", config: config("ari") } })).json;
    const [r1, r2] = await Promise.all([
      api("PUT", `${CONFIGS}/${c.id}`, { key: org.key, body: { config: { app_name: "renamed-app" } } }),
      api("PUT", `${CONFIGS}/${c.id}`, { key: org.key, body: { config: { ws_client_name: "media" } } }),
    ]);
    expect([r1.status, r2.status]).toEqual([200, 200]);
    const now = (await api("GET", `${CONFIGS}/${c.id}`, { key: org.key })).json.credentials;
    expect(now).toMatchObject({ app_name: "renamed-app", ws_client_name: "media" });
  });
});

describe("configuration resolution", () => {
  it("explicit id, else default, else the only one, else 409", async () => {
    const org = await createOrg();
    await expect(resolveTelephonyConfig(env, org.id)).rejects.toMatchObject({ status: 409, detail: "No telephony configuration is set as default" });
    const only = (await api("POST", CONFIGS, { key: org.key, body: { name: "only", config: config("twilio") } })).json;
    expect((await resolveTelephonyConfig(env, org.id)).id).toBe(only.id);
    const second = (await api("POST", CONFIGS, { key: org.key, body: { name: "second", config: config("ari") } })).json;
    await expect(resolveTelephonyConfig(env, org.id, null)).rejects.toMatchObject({ status: 409 });
    const explicit = await resolveTelephonyConfig(env, org.id, second.id);
    expect(explicit).toMatchObject({ id: second.id, name: "second", ready: true, blockedReason: null });
    expect(explicit.provider.name).toBe("ari");
    await api("PUT", `${CONFIGS}/${only.id}`, { key: org.key, body: { is_default_outbound: true } });
    const viaDefault = await resolveTelephonyConfig(env, org.id);
    expect(viaDefault).toMatchObject({ id: only.id, ready: false });
    expect(viaDefault.blockedReason).toContain("caller_id");

    const stranger = await createOrg();
    await expect(resolveTelephonyConfig(env, stranger.id, only.id)).rejects.toMatchObject({ status: 404, detail: "Telephony configuration not found" });
  });
});

describe("phone numbers", () => {
  it("add, list, update, delete; E.164 normalized; default caller ID one per configuration", async () => {
    const org = await createOrg();
    const c = (await api("POST", CONFIGS, { key: org.key, body: { name: "n", config: config("twilio") } })).json;
    const add = await api("POST", numbersOf(c.id), { key: org.key, body: { address: " +14155550100 ", label: "main" } });
    expect(add.status).toBe(200);
    expect(add.json).toEqual({
      id: expect.any(Number),
      address: "+14155550100",
      label: "main",
      is_active: true,
      is_default_caller_id: false,
      inbound_workflow_id: null,
      require_passing_tests: false,
      inbound_url: expect.stringMatching(new RegExp(`/api/v1/telephony/twilio/inbound/${c.id}/[0-9a-f]{64}$`)),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const second = (await api("POST", numbersOf(c.id), { key: org.key, body: { address: "+442071838750", is_default_caller_id: true } })).json;
    expect(second.is_default_caller_id).toBe(true);
    expect(callerIdOf(await resolveTelephonyConfig(env, org.id, c.id))).toBe("+442071838750");

    const flip = await api("PUT", `${numbersOf(c.id)}/${add.json.id}`, { key: org.key, body: { is_default_caller_id: true } });
    expect(flip.json).toMatchObject({ is_default_caller_id: true, label: "main", address: "+14155550100" });
    const list = (await api("GET", numbersOf(c.id), { key: org.key })).json;
    expect(list.items.map((n: { id: number; is_default_caller_id: boolean }) => [n.id, n.is_default_caller_id])).toEqual([
      [second.id, false],
      [add.json.id, true],
    ]);
    expect(callerIdOf(await resolveTelephonyConfig(env, org.id, c.id))).toBe("+14155550100");

    // an inactive default is skipped: the first active number is used
    await api("PUT", `${numbersOf(c.id)}/${add.json.id}`, { key: org.key, body: { is_active: false } });
    expect(callerIdOf(await resolveTelephonyConfig(env, org.id, c.id))).toBe("+442071838750");
    const relabel = await api("PUT", `${numbersOf(c.id)}/${second.id}`, { key: org.key, body: { label: null } });
    expect(relabel.json).toMatchObject({ label: null, address: "+442071838750", is_active: true });

    // credentials.from_numbers shows the active numbers
    expect((await api("GET", `${CONFIGS}/${c.id}`, { key: org.key })).json.credentials.from_numbers).toEqual(["+442071838750"]);

    expect((await api("DELETE", `${numbersOf(c.id)}/${second.id}`, { key: org.key })).json).toEqual({ id: second.id, deleted: true });
    expect((await api("DELETE", `${numbersOf(c.id)}/${second.id}`, { key: org.key })).status).toBe(404);
    expect(callerIdOf(await resolveTelephonyConfig(env, org.id, c.id))).toBeNull();
  });

  it("GET one shows the active numbers in the listing's order (default caller ID first, then oldest), and only its own", async () => {
    const org = await createOrg();
    const c = (await api("POST", CONFIGS, { key: org.key, body: { name: "order", config: config("twilio") } })).json;
    const other = (await api("POST", CONFIGS, { key: org.key, body: { name: "other", config: config("twilio") } })).json;
    const add = async (id: number, address: string, body: Record<string, unknown> = {}) =>
      (await api("POST", numbersOf(id), { key: org.key, body: { address, ...body } })).json;
    expect((await api("GET", `${CONFIGS}/${c.id}`, { key: org.key })).json.credentials.from_numbers).toEqual([]);
    await add(c.id, "+14155550101");
    const off = await add(c.id, "+14155550102");
    await add(c.id, "+14155550103", { is_default_caller_id: true });
    await add(c.id, "+14155550104");
    await add(other.id, "+14155550199");
    await api("PUT", `${numbersOf(c.id)}/${off.id}`, { key: org.key, body: { is_active: false } });
    const one = (await api("GET", `${CONFIGS}/${c.id}`, { key: org.key })).json;
    expect(one.credentials.from_numbers).toEqual(["+14155550103", "+14155550101", "+14155550104"]);
    // The same list the configurations' listing shows (activeNumbersOf).
    const listed = (await api("GET", CONFIGS, { key: org.key })).json.items.find((x: { id: number }) => x.id === c.id);
    expect(listed.credentials.from_numbers).toEqual(one.credentials.from_numbers);
    expect((await api("GET", `${CONFIGS}/${other.id}`, { key: org.key })).json.credentials.from_numbers).toEqual(["+14155550199"]);
    const stranger = await createOrg();
    expect((await api("GET", `${CONFIGS}/${c.id}`, { key: stranger.key })).json).toEqual({ detail: "Telephony configuration not found" });
  });

  it("concurrent requests for default caller ID leave exactly one per configuration", async () => {
    const org = await createOrg();
    const c = (await api("POST", CONFIGS, { key: org.key, body: { name: "callers", config: config("twilio") } })).json;
    const added = await Promise.all(
      [0, 1, 2, 3].map((i) => api("POST", numbersOf(c.id), { key: org.key, body: { address: `+1415555020${i}`, is_default_caller_id: true } })),
    );
    expect(added.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    await Promise.all(added.map((r) => api("PUT", `${numbersOf(c.id)}/${r.json.id}`, { key: org.key, body: { is_default_caller_id: true } })));
    const n = await env.DB.prepare("SELECT COUNT(*) AS n FROM phone_numbers WHERE config_id = ? AND is_default_caller_id = 1")
      .bind(c.id)
      .first<{ n: number }>();
    expect(n!.n).toBe(1);
  });

  it("bad addresses are 422 at body.address; ari also takes extensions and SIP URIs", async () => {
    const org = await createOrg();
    const carrier = (await api("POST", CONFIGS, { key: org.key, body: { name: "carrier", config: config("vonage") } })).json;
    for (const bad of ["+1 415 555 0100", "4155550100", "+1415555", "1001", "sip:1001@pbx.example.test", "+14155550100,+14155550101", ""]) {
      const res = await api("POST", numbersOf(carrier.id), { key: org.key, body: { address: bad } });
      expect(res.status, bad).toBe(422);
      expect(res.json.detail[0].loc).toEqual(["body", "address"]);
    }
    const pbx = (await api("POST", CONFIGS, { key: org.key, body: { name: "pbx", config: config("ari") } })).json;
    for (const good of ["1001", "sip:1001@pbx.example.test", "PJSIP/1002", "+14155550199"]) {
      const res = await api("POST", numbersOf(pbx.id), { key: org.key, body: { address: good } });
      expect(res.status, good).toBe(200);
    }
    const spaced = await api("POST", numbersOf(pbx.id), { key: org.key, body: { address: "10 01" } });
    expect(spaced.json.detail[0].loc).toEqual(["body", "address"]);
    // an update is validated the same way
    const n = (await api("GET", numbersOf(carrier.id), { key: org.key })).json.items;
    expect(n).toEqual([]);
    const added = (await api("POST", numbersOf(carrier.id), { key: org.key, body: { address: "+14155550123" } })).json;
    const badUpdate = await api("PUT", `${numbersOf(carrier.id)}/${added.id}`, { key: org.key, body: { address: "1001" } });
    expect(badUpdate.status).toBe(422);
    expect(badUpdate.json.detail[0].loc).toEqual(["body", "address"]);
  });

  it("unique per organization after normalization (409), across configurations; 404 for others' numbers", async () => {
    const org = await createOrg();
    const a = (await api("POST", CONFIGS, { key: org.key, body: { name: "a", config: config("twilio") } })).json;
    const b = (await api("POST", CONFIGS, { key: org.key, body: { name: "b", config: config("telnyx") } })).json;
    const first = (await api("POST", numbersOf(a.id), { key: org.key, body: { address: "+14155550100" } })).json;
    const dup = await api("POST", numbersOf(b.id), { key: org.key, body: { address: "+14155550100", is_default_caller_id: true } });
    expect(dup.status).toBe(409);
    const other = (await api("POST", numbersOf(b.id), { key: org.key, body: { address: "+14155550101" } })).json;
    expect((await api("PUT", `${numbersOf(b.id)}/${other.id}`, { key: org.key, body: { address: "+14155550100" } })).status).toBe(409);
    // the number belongs to configuration a, not b
    expect((await api("PUT", `${numbersOf(b.id)}/${first.id}`, { key: org.key, body: { label: "x" } })).status).toBe(404);
    expect((await api("PUT", `${numbersOf(b.id)}/999999`, { key: org.key, body: { is_default_caller_id: true } })).status).toBe(404);
    // another organization may hold the same number
    const stranger = await createOrg();
    const s = (await api("POST", CONFIGS, { key: stranger.key, body: { name: "s", config: config("twilio") } })).json;
    expect((await api("POST", numbersOf(s.id), { key: stranger.key, body: { address: "+14155550100" } })).status).toBe(200);
    expect((await api("DELETE", `${numbersOf(a.id)}/${first.id}`, { key: stranger.key })).status).toBe(404);
  });
});

describe("setup checklist", () => {
  const stepOf = (cfg: { setup_checklist: { steps: { key: string }[] } }, key: string) => cfg.setup_checklist.steps.find((s) => s.key === key);

  it("a carrier is ready only once every blocking step is complete", async () => {
    const org = await createOrg();
    const plain = config("plivo");
    delete plain.application_id;
    const c = (await api("POST", CONFIGS, { key: org.key, body: { name: "p", config: plain } })).json;
    expect(c.setup_checklist.steps.map((s: { key: string }) => s.key)).toEqual(["credentials", "caller_id", "application"]);
    expect(c.setup_checklist.ready_for_outbound).toBe(false);
    expect(c.setup_checklist.outbound_blocked_reason).toContain("caller_id");
    expect(stepOf(c, "application")).toMatchObject({ complete: false, blocks_outbound: true });

    const n = (await api("POST", numbersOf(c.id), { key: org.key, body: { address: "+14155550142" } })).json;
    let now = (await api("GET", `${CONFIGS}/${c.id}`, { key: org.key })).json;
    expect(stepOf(now, "caller_id")).toMatchObject({ complete: true, blocks_outbound: true });
    expect(now.setup_checklist).toMatchObject({ ready_for_outbound: false, outbound_blocked_reason: expect.stringContaining("application") });

    now = (await api("PUT", `${CONFIGS}/${c.id}`, { key: org.key, body: { config: { application_id: "app-9" } } })).json;
    expect(now.setup_checklist).toMatchObject({ ready_for_outbound: true, outbound_blocked_reason: null });
    expect(now.setup_checklist.steps.every((s: { complete: boolean }) => s.complete)).toBe(true);
    expect((await resolveTelephonyConfig(env, org.id, c.id)).ready).toBe(true);

    // a deactivated number makes it not ready again
    await api("PUT", `${numbersOf(c.id)}/${n.id}`, { key: org.key, body: { is_active: false } });
    now = (await api("GET", `${CONFIGS}/${c.id}`, { key: org.key })).json;
    expect(now.setup_checklist.ready_for_outbound).toBe(false);

    // an inactive configuration is never ready; changing its configuration clears the flag
    await api("PUT", `${numbersOf(c.id)}/${n.id}`, { key: org.key, body: { is_active: true } });
    await env.DB.prepare(
      "UPDATE telephony_configs SET inactive = 1, inactive_since = '2026-01-01T00:00:00.000Z', inactive_reason = 'PBX unreachable' WHERE id = ?",
    )
      .bind(c.id)
      .run();
    now = (await api("GET", `${CONFIGS}/${c.id}`, { key: org.key })).json;
    expect(now).toMatchObject({ inactive: true, inactive_since: "2026-01-01T00:00:00.000Z", inactive_reason: "PBX unreachable" });
    expect(now.setup_checklist).toMatchObject({ ready_for_outbound: false, outbound_blocked_reason: expect.stringContaining("PBX unreachable") });
    expect((await resolveTelephonyConfig(env, org.id, c.id)).ready).toBe(false);
    now = (await api("PUT", `${CONFIGS}/${c.id}`, { key: org.key, body: { config: { auth_id: "MANEW000000000000000" } } })).json;
    expect(now).toMatchObject({ inactive: false, inactive_since: null, setup_checklist: { ready_for_outbound: true } });
  });

  it("ari: caller ID does not block; telnyx/vonage: webhook signing does not block", async () => {
    const org = await createOrg();
    const ari = (await api("POST", CONFIGS, { key: org.key, body: { name: "ari", config: config("ari") } })).json;
    expect(stepOf(ari, "caller_id")).toMatchObject({ complete: false, blocks_outbound: false });
    expect(ari.setup_checklist.ready_for_outbound).toBe(true);

    const telnyxCfg = config("telnyx");
    delete telnyxCfg.webhook_public_key;
    const telnyx = (await api("POST", CONFIGS, { key: org.key, body: { name: "telnyx", config: telnyxCfg } })).json;
    await api("POST", numbersOf(telnyx.id), { key: org.key, body: { address: "+14155550177" } });
    const t = (await api("GET", `${CONFIGS}/${telnyx.id}`, { key: org.key })).json;
    expect(stepOf(t, "webhook_signing")).toMatchObject({ complete: false, blocks_outbound: false });
    expect(t.setup_checklist.ready_for_outbound).toBe(true);

    const vonageCfg = config("vonage");
    vonageCfg.signature_secret = null;
    const vonage = (await api("POST", CONFIGS, { key: org.key, body: { name: "vonage", config: vonageCfg } })).json;
    expect(vonage.credentials.signature_secret).toBeNull();
    expect(stepOf(vonage, "webhook_signing")).toMatchObject({ complete: false, blocks_outbound: false });
    expect(vonage.setup_checklist.steps.map((s: { key: string }) => s.key)).toEqual(["credentials", "caller_id", "webhook_signing"]);

    const twilio = (await api("POST", CONFIGS, { key: org.key, body: { name: "twilio", config: config("twilio") } })).json;
    expect(twilio.setup_checklist.steps.map((s: { key: string }) => s.key)).toEqual(["credentials", "caller_id"]);
    // Exotel: where to paste the inbound URL by hand (no API routes an Exophone); it never blocks dialing out.
    const exotel = (await api("POST", CONFIGS, { key: org.key, body: { name: "exotel", config: config("exotel") } })).json;
    expect(exotel.setup_checklist.steps.map((s: { key: string }) => s.key)).toEqual(["credentials", "caller_id", "inbound"]);
    expect(stepOf(exotel, "inbound")).toMatchObject({ blocks_outbound: false, description: expect.stringContaining("inbound_url") });
    for (const [p, field] of [
      ["cloudonix", "application_name"],
      ["vobiz", "application_id"],
      ["telnyx", "connection_id"],
    ]) {
      const cfg = config(p);
      delete cfg[field];
      const c = (await api("POST", CONFIGS, { key: org.key, body: { name: `${p}-noapp`, config: cfg } })).json;
      expect(stepOf(c, "application")).toMatchObject({ complete: false, blocks_outbound: true });
    }
  });
});

describe("delete", () => {
  it("409 while an unfinished campaign uses the configuration; allowed once it is finished", async () => {
    const org = await createOrg();
    const c = (await api("POST", CONFIGS, { key: org.key, body: { name: "used", is_default_outbound: true, config: config("twilio") } })).json;
    const num = (await api("POST", numbersOf(c.id), { key: org.key, body: { address: "+14155550188" } })).json;
    const campaignId = await insertCampaign(org.id, c.id, "draft");
    for (const state of ["draft", "running", "paused"]) {
      await env.DB.prepare("UPDATE campaigns SET state = ? WHERE id = ?").bind(state, campaignId).run();
      const res = await api("DELETE", `${CONFIGS}/${c.id}`, { key: org.key });
      expect(res.status, state).toBe(409);
      expect(res.json.detail).toContain(String(campaignId));
    }
    // nothing was removed by the refused deletes
    expect((await api("GET", `${CONFIGS}/${c.id}/phone-numbers`, { key: org.key })).json.items).toEqual([num]);

    await env.DB.prepare("UPDATE campaigns SET state = 'completed' WHERE id = ?").bind(campaignId).run();
    const res = await api("DELETE", `${CONFIGS}/${c.id}`, { key: org.key });
    expect(res.status).toBe(200);
    const campaign = await env.DB.prepare("SELECT telephony_configuration_id FROM campaigns WHERE id = ?").bind(campaignId).first();
    expect(campaign).toEqual({ telephony_configuration_id: null });
    const left = await env.DB.prepare("SELECT COUNT(*) AS n FROM phone_numbers WHERE config_id = ?").bind(c.id).first<{ n: number }>();
    expect(left!.n).toBe(0);
    expect(await defaults(org.id)).toEqual([]);
    // the number is free again in the organization
    const d = (await api("POST", CONFIGS, { key: org.key, body: { name: "next", config: config("twilio") } })).json;
    expect((await api("POST", numbersOf(d.id), { key: org.key, body: { address: "+14155550188" } })).status).toBe(200);
  });
});
