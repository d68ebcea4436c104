// Bad input: each a 4xx in the contract's shape with the exact loc; nothing half-written.
import { describe, expect, it } from "vitest";
import { createOrg } from "../helpers";
import { api, canary, CONFIGS, FIXTURES, PROVIDERS_PATH } from "./support";

const twilio = () => FIXTURES.find((f) => f.provider === "twilio")!.config();
const ari = () => FIXTURES.find((f) => f.provider === "ari")!.config();

describe("create validation", () => {
  it("unknown or missing provider: 422 at config.provider", async () => {
    const { key } = await createOrg();
    const unknown = await api("POST", CONFIGS, { key, body: { name: "x", config: { provider: "carrier_z", auth_token: canary("t") } } });
    expect(unknown.status).toBe(422);
    expect(unknown.json.detail).toHaveLength(1);
    expect(unknown.json.detail[0]).toMatchObject({ loc: ["body", "config", "provider"], type: "union_tag_invalid" });
    const missing = await api("POST", CONFIGS, { key, body: { name: "x", config: { auth_token: canary("t") } } });
    expect(missing.status).toBe(422);
    expect(missing.json.detail[0].loc).toEqual(["body", "config", "provider"]);
    const noConfig = await api("POST", CONFIGS, { key, body: { name: "x" } });
    expect(noConfig.json.detail).toEqual([{ loc: ["body", "config"], msg: "Field required", type: "missing" }]);
  });

  it("name: 1–64 characters", async () => {
    const { key } = await createOrg();
    const long = await api("POST", CONFIGS, { key, body: { name: "n".repeat(65), config: twilio() } });
    expect(long.status).toBe(422);
    expect(long.json.detail).toEqual([expect.objectContaining({ loc: ["body", "name"], type: "string_too_long" })]);
    const empty = await api("POST", CONFIGS, { key, body: { name: "", config: twilio() } });
    expect(empty.json.detail).toEqual([expect.objectContaining({ loc: ["body", "name"], type: "string_too_short" })]);
    expect((await api("POST", CONFIGS, { key, body: { name: "n".repeat(64), config: twilio() } })).status).toBe(200);
  });

  it("external_pbx.timeout_seconds: 1–30, default 8; ari defaults applied", async () => {
    const { key } = await createOrg();
    for (const bad of [0, 31]) {
      const cfg = ari();
      (cfg.external_pbx as Record<string, unknown>).timeout_seconds = bad;
      const res = await api("POST", CONFIGS, { key, body: { name: `t${bad}`, config: cfg } });
      expect(res.status).toBe(422);
      expect(res.json.detail).toEqual([
        expect.objectContaining({
          loc: ["body", "config", "external_pbx", "timeout_seconds"],
          type: bad ? "less_than_equal" : "greater_than_equal",
          input: bad,
        }),
      ]);
    }
    const ok = await api("POST", CONFIGS, { key, body: { name: "ok", config: ari() } });
    expect(ok.status).toBe(200);
    expect(ok.json.credentials).toMatchObject({
      dial_string_template: "PJSIP/{number}",
      ws_client_name: "",
      external_pbx: { type: "vicidial", timeout_seconds: 8, agent_api: { source: "edgedial" } },
    });
    // the same limits hold on update
    const upd = await api("PUT", `${CONFIGS}/${ok.json.id}`, { key, body: { config: { external_pbx: { timeout_seconds: 31 } } } });
    expect(upd.status).toBe(422);
    expect(upd.json.detail[0].loc).toEqual(["body", "config", "external_pbx", "timeout_seconds"]);
  });

  it("from_numbers is accepted and ignored on create", async () => {
    const { key } = await createOrg();
    const res = await api("POST", CONFIGS, { key, body: { name: "f", config: { ...twilio(), from_numbers: ["+14155550100"] } } });
    expect(res.status).toBe(200);
    expect(res.json.credentials.from_numbers).toEqual([]);
    expect((await api("GET", `${CONFIGS}/${res.json.id}/phone-numbers`, { key })).json.items).toEqual([]);
  });

  it("a value that looks masked is refused on create (there is no stored secret to keep)", async () => {
    const { key } = await createOrg();
    const res = await api("POST", CONFIGS, { key, body: { name: "m", config: { ...twilio(), auth_token: "****************abcd" } } });
    expect(res.status).toBe(422);
    expect(res.json.detail).toEqual([expect.objectContaining({ loc: ["body", "config", "auth_token"], type: "value_error" })]);
    expect((await api("GET", CONFIGS, { key })).json.items).toEqual([]);
  });

  it("a 422 never echoes a secret", async () => {
    const { key } = await createOrg();
    const tooLong = `${canary("long")}${"x".repeat(1100)}`;
    const res = await api("POST", CONFIGS, { key, body: { name: "s", config: { ...twilio(), auth_token: tooLong } } });
    expect(res.status).toBe(422);
    expect(res.json.detail[0]).toMatchObject({ loc: ["body", "config", "auth_token"], type: "string_too_long" });
    expect(res.json.detail[0]).not.toHaveProperty("input");
    const c = (await api("POST", CONFIGS, { key, body: { name: "s", config: twilio() } })).json;
    const upd = await api("PUT", `${CONFIGS}/${c.id}`, { key, body: { config: { auth_token: tooLong } } });
    expect(upd.status).toBe(422);
    expect(upd.json.detail[0]).not.toHaveProperty("input");
  });

  it("field formats: ari_endpoint is an http(s) URL, dial template needs {number}, telnyx key is 32 bytes", async () => {
    const { key } = await createOrg();
    const badUrl = await api("POST", CONFIGS, { key, body: { name: "u", config: { ...ari(), ari_endpoint: "pbx:8088" } } });
    expect(badUrl.json.detail[0].loc).toEqual(["body", "config", "ari_endpoint"]);
    const badTemplate = await api("POST", CONFIGS, { key, body: { name: "d", config: { ...ari(), dial_string_template: "PJSIP/100" } } });
    expect(badTemplate.json.detail[0].loc).toEqual(["body", "config", "dial_string_template"]);
    const telnyx = FIXTURES.find((f) => f.provider === "telnyx")!.config();
    const badKey = await api("POST", CONFIGS, { key, body: { name: "k", config: { ...telnyx, webhook_public_key: "bm9wZQ==" } } });
    expect(badKey.json.detail[0].loc).toEqual(["body", "config", "webhook_public_key"]);
    const exotel = FIXTURES.find((f) => f.provider === "exotel")!.config();
    const badHost = await api("POST", CONFIGS, { key, body: { name: "e", config: { ...exotel, api_base_url: "https://evil.example" } } });
    expect(badHost.json.detail[0].loc).toEqual(["body", "config", "api_base_url"]);
    const ok = await api("POST", CONFIGS, { key, body: { name: "e", config: exotel } });
    expect(ok.json.credentials.api_base_url).toBe("https://api.in.exotel.com");
  });

  it("malformed JSON and wrong types are 422, never 500", async () => {
    const { key } = await createOrg();
    expect((await api("POST", CONFIGS, { key, raw: "{" })).status).toBe(422);
    const c = (await api("POST", CONFIGS, { key, body: { name: "j", config: twilio() } })).json;
    expect((await api("PUT", `${CONFIGS}/${c.id}`, { key, raw: "{" })).status).toBe(422);
    const notObject = await api("PUT", `${CONFIGS}/${c.id}`, { key, body: { config: "twilio" } });
    expect(notObject.status).toBe(422);
    expect(notObject.json.detail[0].loc).toEqual(["body", "config"]);
    const badType = await api("PUT", `${CONFIGS}/${c.id}`, { key, body: { config: { amd_enabled: "yes" } } });
    expect(badType.json.detail).toEqual([expect.objectContaining({ loc: ["body", "config", "amd_enabled"], type: "bool_type" })]);
    const nullRequired = await api("PUT", `${CONFIGS}/${c.id}`, { key, body: { config: { account_sid: null } } });
    expect(nullRequired.status).toBe(422);
    expect(nullRequired.json.detail[0].loc).toEqual(["body", "config", "account_sid"]);
    const unknownProvider = await api("PUT", `${CONFIGS}/${c.id}`, { key, body: { config: { provider: "nope" } } });
    expect(unknownProvider.json.detail[0].loc).toEqual(["body", "config", "provider"]);
    expect((await api("GET", `${CONFIGS}/abc`, { key })).status).toBe(404);
    expect((await api("GET", `${CONFIGS}?limit=0`, { key })).status).toBe(422);
    // none of the refused updates changed anything
    expect((await api("GET", `${CONFIGS}/${c.id}`, { key })).json).toEqual(c);
  });
});

describe("names, organizations, authentication", () => {
  it("a duplicate name is 409 on create and on update", async () => {
    const { key } = await createOrg();
    const a = (await api("POST", CONFIGS, { key, body: { name: "main", config: twilio() } })).json;
    const dup = await api("POST", CONFIGS, { key, body: { name: "main", is_default_outbound: true, config: twilio() } });
    expect(dup.status).toBe(409);
    expect(typeof dup.json.detail).toBe("string");
    const b = (await api("POST", CONFIGS, { key, body: { name: "other", config: twilio() } })).json;
    const rename = await api("PUT", `${CONFIGS}/${b.id}`, { key, body: { name: "main", is_default_outbound: true } });
    expect(rename.status).toBe(409);
    // the refused default did not clear or move anything
    const items = (await api("GET", CONFIGS, { key })).json.items;
    expect(items.map((i: { name: string }) => i.name).sort()).toEqual(["main", "other"]);
    expect(items.every((i: { is_default_outbound: boolean }) => !i.is_default_outbound)).toBe(true);
    expect((await api("GET", `${CONFIGS}/${a.id}`, { key })).json).toEqual(a);
    // another organization may use the same name
    const other = await createOrg();
    expect((await api("POST", CONFIGS, { key: other.key, body: { name: "main", config: twilio() } })).status).toBe(200);
  });

  it("another organization's configuration is 404 everywhere", async () => {
    const owner = await createOrg();
    const c = (await api("POST", CONFIGS, { key: owner.key, body: { name: "mine", config: twilio() } })).json;
    const { key } = await createOrg();
    expect((await api("GET", `${CONFIGS}/${c.id}`, { key })).json).toEqual({ detail: "Telephony configuration not found" });
    expect((await api("PUT", `${CONFIGS}/${c.id}`, { key, body: { name: "stolen" } })).status).toBe(404);
    expect((await api("DELETE", `${CONFIGS}/${c.id}`, { key })).status).toBe(404);
    expect((await api("GET", `${CONFIGS}/${c.id}/phone-numbers`, { key })).status).toBe(404);
    expect((await api("POST", `${CONFIGS}/${c.id}/phone-numbers`, { key, body: { address: "+14155550100" } })).status).toBe(404);
    expect((await api("GET", CONFIGS, { key })).json.items).toEqual([]);
    expect((await api("GET", `${CONFIGS}/${c.id}`, { key: owner.key })).json).toEqual(c);
  });

  it("every operation needs a key", async () => {
    expect((await api("GET", CONFIGS)).status).toBe(401);
    expect((await api("GET", PROVIDERS_PATH)).status).toBe(401);
    expect((await api("POST", CONFIGS, { body: { name: "x", config: twilio() } })).status).toBe(401);
  });

  it("lists page newest first", async () => {
    const { key } = await createOrg();
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await api("POST", CONFIGS, { key, body: { name: `c${i}`, config: twilio() } })).json.id);
    const first = await api("GET", `${CONFIGS}?limit=2`, { key });
    expect(first.json.items.map((i: { id: number }) => i.id)).toEqual([ids[2], ids[1]]);
    const second = await api("GET", `${CONFIGS}?limit=2&cursor=${first.json.next_cursor}`, { key });
    expect(second.json).toMatchObject({ items: [{ id: ids[0] }], next_cursor: null });
  });
});

describe("GET /organizations/telephony-providers", () => {
  it("lists the eight providers with their fields (and, in local development, the sandbox)", async () => {
    const { key } = await createOrg();
    const res = await api("GET", PROVIDERS_PATH, { key });
    expect(res.status).toBe(200);
    expect(res.json.items.map((p: { name: string }) => p.name)).toEqual([
      "ari",
      "cloudonix",
      "plivo",
      "telnyx",
      "twilio",
      "vobiz",
      "vonage",
      "exotel",
      "sandbox",
    ]);
    const byName = Object.fromEntries(res.json.items.map((p: { name: string }) => [p.name, p]));
    expect(byName.exotel.fields).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "account_sid", type: "string", required: true, sensitive: false }),
        expect.objectContaining({ name: "api_key", required: true, sensitive: true }),
        expect.objectContaining({ name: "api_token", required: true, sensitive: true }),
        expect.objectContaining({ name: "api_base_url", required: false, sensitive: false, default: "https://api.in.exotel.com" }),
      ]),
    );
    expect(byName.ari.fields).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "external_pbx.agent_api.password", sensitive: true }),
        expect.objectContaining({ name: "external_pbx.timeout_seconds", type: "integer", default: 8 }),
      ]),
    );
    for (const p of res.json.items) {
      expect(p).toMatchObject({ display_name: expect.any(String), docs_url: expect.stringMatching(/^https:\/\//) });
      for (const f of p.fields)
        expect(f).toMatchObject({ type: expect.any(String), required: expect.any(Boolean), sensitive: expect.any(Boolean), description: expect.any(String) });
    }
    const sensitive = (name: string) =>
      byName[name].fields
        .filter((f: { sensitive: boolean }) => f.sensitive)
        .map((f: { name: string }) => f.name)
        .sort();
    expect(sensitive("ari")).toEqual(["app_password", "external_pbx.agent_api.password", "external_pbx.non_agent_api.password"]);
    expect(sensitive("cloudonix")).toEqual(["bearer_token"]);
    expect(sensitive("plivo")).toEqual(["auth_token"]);
    expect(sensitive("vobiz")).toEqual(["auth_token"]);
    expect(sensitive("twilio")).toEqual(["auth_token"]);
    expect(sensitive("telnyx")).toEqual(["api_key"]);
    expect(sensitive("vonage")).toEqual(["api_secret", "private_key", "signature_secret"]);
    expect(sensitive("exotel")).toEqual(["api_key", "api_token"]);
  });
});

describe("credential shapes the carriers document", () => {
  it("a Twilio account SID that is not AC + 32 hex, or a Plivo Auth ID that is not MA/SA + 18 alnum, is a 422 at the field, on create and update", async () => {
    const { key } = await createOrg();
    const plivo = FIXTURES.find((f) => f.provider === "plivo")!.config();
    for (const [config, field, msg] of [
      [{ ...twilio(), account_sid: "AC123" }, "account_sid", "Twilio account SIDs are AC followed by 32 hex digits"],
      [{ ...twilio(), account_sid: "ZZ00000000000000000000000000000001" }, "account_sid", "Twilio account SIDs are AC followed by 32 hex digits"],
      [{ ...plivo, auth_id: "XA123456789012345678" }, "auth_id", "Plivo Auth IDs are MA or SA followed by 18 letters or digits"],
      [{ ...plivo, auth_id: "MA_1" }, "auth_id", "Plivo Auth IDs are MA or SA followed by 18 letters or digits"],
    ] as const) {
      const res = await api("POST", CONFIGS, { key, body: { name: `c-${crypto.randomUUID()}`, config } });
      expect(res.status, res.text).toBe(422);
      expect(res.json.detail[0]).toMatchObject({ loc: ["body", "config", field], msg });
    }
    const ok = await api("POST", CONFIGS, { key, body: { name: "shaped", config: { ...plivo, auth_id: "SA0123456789ABCDEFGH" } } });
    expect(ok.status, ok.text).toBe(200);
    const bad = await api("PUT", `${CONFIGS}/${ok.json.id}`, { key, body: { config: { auth_id: "SA01" } } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["body", "config", "auth_id"]);
    // Vobiz documents no shape: its Auth ID is only checked for presence.
    const vobiz = FIXTURES.find((f) => f.provider === "vobiz")!.config();
    expect((await api("POST", CONFIGS, { key, body: { name: "vobiz", config: vobiz } })).status).toBe(200);
  });
});
