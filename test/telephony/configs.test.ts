// The configuration lifecycle for each of the eight providers, over HTTP, with secrets checked at rest.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getProvider } from "../../src/telephony/providers/registry";
import { loadConfigContext } from "../../src/telephony/resolve";
import { createOrg } from "../helpers";
import { api, CANARY, canary, CONFIGS, configRow, expectedMask, FIXTURES, getAt, rawRowText, withoutPath } from "./support";

const RESPONSE_FIELDS = [
  "id",
  "name",
  "provider",
  "is_default_outbound",
  "credentials",
  "created_at",
  "updated_at",
  "connectivity",
  "inactive",
  "inactive_since",
  "inactive_reason",
  "sip_connectivity",
  "setup_checklist",
  "supports_trunks",
  "trunks",
];

/** {a: {b: value}} from "a.b". */
function nest(path: string, value: unknown): Record<string, unknown> {
  return path
    .split(".")
    .reverse()
    .reduce<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
}

async function decrypted(id: number) {
  const row = await configRow(id);
  expect(row).toBeTruthy();
  return (await loadConfigContext(env, row!)).config;
}

describe.each(FIXTURES)("$provider", (fx) => {
  const provider = getProvider(fx.provider);

  it("create → get → list → partial update → masked round-trip → rotate a secret → delete", async () => {
    const { key } = await createOrg();
    const cfg = fx.config();
    const secrets = provider.sensitive.map((p) => [p, getAt(cfg, p)] as const).filter(([, v]) => typeof v === "string") as [string, string][];
    // The fixture plants a canary in every sensitive field of the provider.
    expect(secrets.map(([p]) => p).sort()).toEqual([...provider.sensitive].sort());

    // create
    const created = await api("POST", CONFIGS, { key, body: { name: `${fx.provider} main`, config: cfg } });
    expect(created.status).toBe(200);
    const c = created.json;
    expect(Object.keys(c).sort()).toEqual([...RESPONSE_FIELDS].sort());
    expect(c).toMatchObject({
      name: `${fx.provider} main`,
      provider: fx.provider,
      is_default_outbound: false,
      connectivity: fx.provider === "ari" ? "sip" : "api",
      inactive: false,
      inactive_since: null,
      inactive_reason: null,
      supports_trunks: fx.provider === "cloudonix",
      trunks: [],
    });
    expect(c.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    if (fx.provider === "cloudonix") {
      expect(c.sip_connectivity.provider_display_name).toBe("Cloudonix");
      expect(c.sip_connectivity.regions[0].inbound_transports.length).toBeGreaterThan(0);
    } else {
      expect(c.sip_connectivity).toBeNull();
    }
    expect(c.credentials.provider).toBe(fx.provider);
    for (const [path, value] of secrets) expect(getAt(c.credentials, path)).toBe(expectedMask(value));
    for (const [k, v] of Object.entries(cfg)) {
      if (k !== "provider" && typeof v !== "object" && !provider.sensitive.includes(k)) expect(c.credentials[k]).toEqual(v);
    }
    expect(c.setup_checklist.docs_url).toBe(provider.docsUrl);

    // at rest: no plaintext in the row, and the envelopes open to the original values
    const raw = await rawRowText(c.id);
    expect(raw).not.toContain(CANARY);
    for (const [, value] of secrets) expect(raw).not.toContain(value);
    let plain = await decrypted(c.id);
    for (const [path, value] of secrets) expect(getAt(plain, path)).toBe(value);

    // get and list
    const got = await api("GET", `${CONFIGS}/${c.id}`, { key });
    expect(got.status).toBe(200);
    expect(got.json).toEqual(c);
    const list = await api("GET", CONFIGS, { key });
    expect(list.status).toBe(200);
    expect(list.json).toEqual({ items: [c], next_cursor: null });

    // partial update: one field changes, everything else stays
    const patched = await api("PUT", `${CONFIGS}/${c.id}`, { key, body: { config: fx.patch.config } });
    expect(patched.status).toBe(200);
    expect(getAt(patched.json.credentials, fx.patch.path)).toEqual(fx.patch.value);
    expect(patched.json.name).toBe(c.name);
    for (const [path, value] of secrets) expect(getAt(patched.json.credentials, path)).toBe(expectedMask(value));
    expect(patched.json.updated_at > c.updated_at).toBe(true);

    // masked round-trip: the response sent back as the next request keeps every secret
    const roundTrip = await api("PUT", `${CONFIGS}/${c.id}`, { key, body: { name: `${fx.provider} renamed`, config: patched.json.credentials } });
    expect(roundTrip.status).toBe(200);
    expect(roundTrip.json.name).toBe(`${fx.provider} renamed`);
    expect(roundTrip.json.credentials).toEqual(patched.json.credentials);
    plain = await decrypted(c.id);
    for (const [path, value] of secrets) expect(getAt(plain, path)).toBe(value);

    // a masked-looking value that is not the current mask is refused, and nothing changes
    const wrongMask = await api("PUT", `${CONFIGS}/${c.id}`, { key, body: { config: nest(fx.rotate, "********wxyz") } });
    expect(wrongMask.status).toBe(422);
    expect(wrongMask.json.detail).toEqual([expect.objectContaining({ loc: ["body", "config", ...fx.rotate.split(".")], type: "value_error" })]);

    // rotate one secret
    const fresh = canary(`${fx.provider}_rotated`);
    const rotated = await api("PUT", `${CONFIGS}/${c.id}`, { key, body: { config: nest(fx.rotate, fresh) } });
    expect(rotated.status).toBe(200);
    expect(getAt(rotated.json.credentials, fx.rotate)).toBe(expectedMask(fresh));
    plain = await decrypted(c.id);
    for (const [path, value] of secrets) expect(getAt(plain, path)).toBe(path === fx.rotate ? fresh : value);
    expect(getAt(plain, fx.patch.path)).toEqual(fx.patch.value);
    expect(await rawRowText(c.id)).not.toContain(CANARY);

    // delete
    const deleted = await api("DELETE", `${CONFIGS}/${c.id}`, { key });
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ id: c.id, deleted: true });
    expect((await api("GET", `${CONFIGS}/${c.id}`, { key })).status).toBe(404);
    expect(await configRow(c.id)).toBeUndefined();
    expect((await api("DELETE", `${CONFIGS}/${c.id}`, { key })).status).toBe(404);
  });

  it("each missing required field is its own 422 at its loc, and nothing is stored", async () => {
    const { key } = await createOrg();
    const cfg = fx.config();
    const required = provider.fields
      .filter((f) => f.required)
      .map((f) => f.name)
      .filter((p) => !p.includes(".") || getAt(cfg, p.slice(0, p.lastIndexOf("."))) !== undefined);
    expect(required.length).toBeGreaterThan(0);
    for (const path of required) {
      const res = await api("POST", CONFIGS, { key, body: { name: "x", config: withoutPath(cfg, path) } });
      expect(res.status, path).toBe(422);
      expect(res.json.detail).toEqual([{ loc: ["body", "config", ...path.split(".")], msg: "Field required", type: "missing" }]);
    }
    // all top-level required fields at once: one item each
    const topLevel = required.filter((p) => !p.includes("."));
    const bare = await api("POST", CONFIGS, { key, body: { name: "x", config: { provider: fx.provider } } });
    expect(bare.status).toBe(422);
    expect(bare.json.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual(topLevel.map((p) => ["body", "config", p]));
    expect((await api("GET", CONFIGS, { key })).json.items).toEqual([]);
  });

  it("the provider cannot change, and `provider` may be omitted on update", async () => {
    const { key } = await createOrg();
    const c = (await api("POST", CONFIGS, { key, body: { name: "p", config: fx.config() } })).json;
    const other = FIXTURES.find((f) => f.provider !== fx.provider)!;
    const res = await api("PUT", `${CONFIGS}/${c.id}`, { key, body: { config: other.config() } });
    expect(res.status).toBe(422);
    expect(res.json.detail).toEqual([
      expect.objectContaining({ loc: ["body", "config", "provider"], msg: "Provider cannot be changed; create a new configuration instead" }),
    ]);
    const same = await api("PUT", `${CONFIGS}/${c.id}`, { key, body: { config: { provider: fx.provider } } });
    expect(same.status).toBe(200);
    expect(same.json.credentials).toEqual(c.credentials);
  });
});
