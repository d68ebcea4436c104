// Key rotation of secrets at rest, the auto-provisioning hook, and the OpenAPI document.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { base64Encode } from "../../src/lib/crypto";
import { SecretBoxError } from "../../src/lib/secret-box";
import { PROVIDERS } from "../../src/telephony/providers/registry";
import { loadConfigContext } from "../../src/telephony/resolve";
import { createOrg } from "../helpers";
import { api, CANARY, CONFIGS, configRow, FIXTURES, getAt } from "./support";

const OLD = env.ENCRYPTION_KEYS;
const NEW = `t2:${base64Encode(crypto.getRandomValues(new Uint8Array(32)))}`;

async function fetchWith(keys: string, method: string, path: string, key: string, body?: unknown) {
  const res = await worker.fetch(
    new Request(`http://edgedial.test${path}`, {
      method,
      headers: { "X-API-Key": key, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    }),
    { ...env, ENCRYPTION_KEYS: keys },
    createExecutionContext(),
  );
  const text = await res.text();
  expect(text).not.toContain(CANARY);
  return { status: res.status, json: JSON.parse(text) };
}

const kids = async (id: number) => Object.values((await configRow(id))!.secrets as Record<string, { kid: string }>).map((s) => s.kid);

describe("key rotation", () => {
  it("old rows still decrypt after rotation; every write re-encrypts under the new first key", async () => {
    const org = await createOrg();
    const fx = FIXTURES.find((f) => f.provider === "vonage")!;
    const cfg = fx.config();
    const a = (await api("POST", CONFIGS, { key: org.key, body: { name: "a", config: cfg } })).json;
    const b = (await api("POST", CONFIGS, { key: org.key, body: { name: "b", config: fx.config() } })).json;
    expect(await kids(a.id)).toEqual(["t1", "t1", "t1"]);

    const rotated = `${NEW},${OLD}`;
    // Reads never decrypt; dialing decrypts rows sealed under the old key while it is still listed.
    expect((await fetchWith(rotated, "GET", `${CONFIGS}/${a.id}`, org.key)).json).toEqual(a);
    let plain = (await loadConfigContext({ ...env, ENCRYPTION_KEYS: rotated }, (await configRow(a.id))!)).config;
    expect(plain.private_key).toBe(cfg.private_key);

    // A write (here only a rename) re-seals every secret of the row under the new key.
    const before = JSON.stringify((await configRow(a.id))!.secrets);
    const renamed = await fetchWith(rotated, "PUT", `${CONFIGS}/${a.id}`, org.key, { name: "a2" });
    expect(renamed.status).toBe(200);
    expect(renamed.json.credentials).toEqual(a.credentials);
    expect(await kids(a.id)).toEqual(["t2", "t2", "t2"]);
    expect(JSON.stringify((await configRow(a.id))!.secrets)).not.toBe(before);

    // Once rewritten, the row opens with the new key alone, and no longer with the old one.
    plain = (await loadConfigContext({ ...env, ENCRYPTION_KEYS: NEW }, (await configRow(a.id))!)).config;
    for (const path of ["api_secret", "private_key", "signature_secret"]) expect(getAt(plain, path)).toBe(getAt(cfg, path));
    await expect(loadConfigContext(env, (await configRow(a.id))!)).rejects.toBeInstanceOf(SecretBoxError);

    // The row nobody wrote is still under the old key and still opens while it is listed.
    expect(await kids(b.id)).toEqual(["t1", "t1", "t1"]);
    await expect(loadConfigContext({ ...env, ENCRYPTION_KEYS: rotated }, (await configRow(b.id))!)).resolves.toBeTruthy();

    // A masked round-trip under the new key keeps the secrets (re-sealed, same plaintext).
    const roundTrip = await fetchWith(rotated, "PUT", `${CONFIGS}/${b.id}`, org.key, { config: b.credentials });
    expect(roundTrip.status).toBe(200);
    expect(await kids(b.id)).toEqual(["t2", "t2", "t2"]);
    const bPlain = (await loadConfigContext({ ...env, ENCRYPTION_KEYS: NEW }, (await configRow(b.id))!)).config;
    expect(bPlain.api_secret).toMatch(/^CANARY_vonage_secret_/);
  });

  it("an envelope moved to another organization's row does not open", async () => {
    const one = await createOrg();
    const two = await createOrg();
    const fx = FIXTURES.find((f) => f.provider === "twilio")!;
    const a = (await api("POST", CONFIGS, { key: one.key, body: { name: "a", config: fx.config() } })).json;
    const b = (await api("POST", CONFIGS, { key: two.key, body: { name: "b", config: fx.config() } })).json;
    await env.DB.prepare("UPDATE telephony_configs SET secrets = (SELECT secrets FROM telephony_configs WHERE id = ?) WHERE id = ?").bind(a.id, b.id).run();
    await expect(loadConfigContext(env, (await configRow(b.id))!)).rejects.toBeInstanceOf(SecretBoxError);
  });
});

describe("auto-provisioning on save", () => {
  it("a failed provisioning keeps the configuration, shows the carrier's message, and the next update retries", async () => {
    const org = await createOrg();
    const plivo = PROVIDERS.plivo;
    const seen: Record<string, unknown>[] = [];
    let reachable = false;
    const original = plivo.provision;
    plivo.provision = async (ctx) => {
      seen.push(ctx.config);
      if (!reachable) throw new Error("carrier unreachable: connect ECONNREFUSED");
      return { state: { provisioned_at: "now" }, config: { application_id: "auto-42", auth_token: "must-not-be-stored" } };
    };
    try {
      const cfg = FIXTURES.find((f) => f.provider === "plivo")!.config();
      delete cfg.application_id;
      const created = await fetchWith(OLD, "POST", CONFIGS, org.key, { name: "auto", config: cfg });
      expect(created.status).toBe(200);
      const step = created.json.setup_checklist.steps.find((s: { key: string }) => s.key === "application");
      expect(step).toMatchObject({ complete: false, blocks_outbound: true });
      expect(step.description).toContain("carrier unreachable");
      // the provider saw the decrypted secret (it needs it to call the carrier)
      expect(seen[0].auth_token).toBe(cfg.auth_token);

      reachable = true;
      const retried = await fetchWith(OLD, "PUT", `${CONFIGS}/${created.json.id}`, org.key, { config: { auth_id: "MARETRY0000000000000" } });
      expect(retried.status).toBe(200);
      expect(retried.json.credentials.application_id).toBe("auto-42");
      expect(retried.json.setup_checklist.steps.find((s: { key: string }) => s.key === "application")).toMatchObject({ complete: true });
      const row = (await configRow(created.json.id))!;
      expect(row.state).toEqual({ provisioned_at: "now" });
      // provisioning can fill ids, never secrets
      const plain = (await loadConfigContext(env, row)).config;
      expect(plain.auth_token).toBe(cfg.auth_token);
    } finally {
      plivo.provision = original;
    }
  });
});

describe("OpenAPI", () => {
  it("lists every telephony operation, with the eight carriers' variants (and local development's sandbox) on create and on update", async () => {
    const doc = (await api("GET", "/api/v1/openapi.json")).json;
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, m]) => Object.keys(m).map((k) => `${k.toUpperCase()} ${p}`));
    const base = "/api/v1/organizations";
    expect(ops).toEqual(
      expect.arrayContaining([
        `GET ${base}/telephony-providers`,
        `GET ${base}/telephony-configs`,
        `POST ${base}/telephony-configs`,
        `GET ${base}/telephony-configs/{config_id}`,
        `PUT ${base}/telephony-configs/{config_id}`,
        `DELETE ${base}/telephony-configs/{config_id}`,
        `GET ${base}/telephony-configs/{config_id}/phone-numbers`,
        `POST ${base}/telephony-configs/{config_id}/phone-numbers`,
        `PUT ${base}/telephony-configs/{config_id}/phone-numbers/{number_id}`,
        `DELETE ${base}/telephony-configs/{config_id}/phone-numbers/{number_id}`,
      ]),
    );
    const resolve = (s: { $ref?: string }) => (s.$ref ? doc.components.schemas[s.$ref.split("/").pop()!] : s);
    const body = (method: string, path: string) => resolve(doc.paths[`${base}${path}`][method].requestBody.content["application/json"].schema);
    const names = ["Ari", "Cloudonix", "Plivo", "Telnyx", "Twilio", "Vobiz", "Vonage", "Exotel", "Sandbox"];

    const create = body("post", "/telephony-configs").properties.config;
    expect(create.oneOf.map((r: { $ref: string }) => r.$ref)).toEqual(names.map((n) => `#/components/schemas/${n}Config`));
    expect(Object.keys(create.discriminator.mapping)).toEqual(["ari", "cloudonix", "plivo", "telnyx", "twilio", "vobiz", "vonage", "exotel", "sandbox"]);
    const update = body("put", "/telephony-configs/{config_id}").properties.config;
    expect(update.anyOf.map((r: { $ref: string }) => r.$ref)).toEqual(names.map((n) => `#/components/schemas/${n}ConfigUpdate`));

    const exotel = doc.components.schemas.ExotelConfig;
    expect(exotel.required).toEqual(["provider", "account_sid", "api_key", "api_token"]);
    expect(exotel.properties.api_base_url.default).toBe("https://api.in.exotel.com");
    expect(doc.components.schemas.ExotelConfigUpdate.required ?? []).toEqual([]);
    const ari = doc.components.schemas.AriConfig.properties;
    expect(ari.dial_string_template.default).toBe("PJSIP/{number}");
    expect(doc.components.schemas.TelephonyConfig.required).toEqual(
      expect.arrayContaining(["id", "name", "provider", "is_default_outbound", "credentials", "created_at", "updated_at", "setup_checklist", "trunks"]),
    );
  });
});
