// SSRF: PBX URLs on loopback, private, CGNAT addresses or local names need the organization's
// allow_private_pbx; metadata and link-local never pass; another organization is unaffected.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createOrg, type Org } from "../helpers";

const CONFIGS = "/api/v1/organizations/telephony-configs";
const POLICY = "/api/v1/organizations/calling-policy";
const PRIVATE = [
  "http://127.0.0.1:8088",
  "http://[::1]:8088",
  "http://2130706433:8088",
  "http://192.168.1.10:8088",
  "http://10.0.0.5:8088",
  "http://100.64.0.1:8088",
  "http://pbx.local:8088",
  "http://localhost:8088",
];
const NEVER = ["http://169.254.169.254", "http://169.254.10.1:8088", "http://metadata.google.internal"];

const ari = (ari_endpoint: string, extra: Record<string, unknown> = {}) => ({
  provider: "ari",
  ari_endpoint,
  app_name: "edgedial",
  app_password: "pw-0001",
  ...extra,
});
const create = (org: Org, config: unknown) => call("POST", CONFIGS, { key: org.key, body: { name: `pbx-${crypto.randomUUID()}`, config } });
const allow = async (org: Org, on: boolean) => {
  const res = await call("PUT", POLICY, { key: org.key, body: { allow_private_pbx: on } });
  expect(res.status, res.text).toBe(200);
  expect(res.json.allow_private_pbx).toBe(on);
};

describe("allow_private_pbx", () => {
  it("is false by default and refuses private ari endpoints at the field, naming the setting", async () => {
    const org = await createOrg();
    expect((await call("GET", POLICY, { key: org.key })).json.allow_private_pbx).toBe(false);
    for (const url of PRIVATE) {
      const res = await create(org, ari(url));
      expect(res.status, url).toBe(422);
      expect(res.json.detail).toEqual([
        expect.objectContaining({ loc: ["body", "config", "ari_endpoint"], type: "url_not_allowed", msg: expect.stringContaining("allow_private_pbx") }),
      ]);
    }
    expect((await call("GET", CONFIGS, { key: org.key })).json.items ?? []).toEqual([]);
  });

  it("refuses private external_pbx API URLs, located at each", async () => {
    const org = await createOrg();
    const external_pbx = {
      agent_api: { url: "http://10.1.2.3/agc/api.php", username: "a", password: "p" },
      non_agent_api: { url: "http://dialer.internal/vicidial/non_agent_api.php", username: "b", password: "q" },
    };
    const res = await create(org, ari("https://pbx.example.com:8088", { external_pbx }));
    expect(res.status, res.text).toBe(422);
    expect(res.json.detail.map((d: { loc: string[] }) => d.loc.join("."))).toEqual([
      "body.config.external_pbx.agent_api.url",
      "body.config.external_pbx.non_agent_api.url",
    ]);
    await allow(org, true);
    expect((await create(org, ari("https://pbx.example.com:8088", { external_pbx }))).status).toBe(200);
  });

  it("accepts them once enabled (audited), never metadata or link-local; another organization is unaffected", async () => {
    const org = await createOrg();
    const other = await createOrg();
    await allow(org, true);
    for (const url of PRIVATE) expect((await create(org, ari(url))).status, url).toBe(200);
    for (const url of NEVER) expect((await create(org, ari(url))).status, url).toBe(422);
    for (const url of PRIVATE) expect((await create(other, ari(url))).status, url).toBe(422);
    const log = await call("GET", "/api/v1/organizations/audit-log", { key: org.key });
    expect(JSON.stringify(log.json)).toContain("allow_private_pbx");
  });

  it("an update to a private endpoint is refused without it; a public one is always fine", async () => {
    const org = await createOrg();
    const created = await create(org, ari("https://pbx.example.com:8088"));
    expect(created.status, created.text).toBe(200);
    const put = (ari_endpoint: string) => call("PUT", `${CONFIGS}/${created.json.id}`, { key: org.key, body: { config: { ari_endpoint } } });
    const refused = await put("http://192.168.0.2:8088");
    expect(refused.status).toBe(422);
    expect(refused.json.detail[0].loc).toEqual(["body", "config", "ari_endpoint"]);
    await allow(org, true);
    expect((await put("http://192.168.0.2:8088")).status).toBe(200);
  });
});

describe("the service's own origin", () => {
  // The API called where `npm run dev` serves it, with Asterisk's HTTP server beside it on the same machine.
  const LOCAL_API = "http://127.0.0.1:8787";
  const createAt = async (origin: string, org: Org, ari_endpoint: string) => {
    const res = await exports.default.fetch(
      new Request(`${origin}${CONFIGS}`, {
        method: "POST",
        headers: { "X-API-Key": org.key, "Content-Type": "application/json" },
        body: JSON.stringify({ name: `pbx-${crypto.randomUUID()}`, config: ari(ari_endpoint) }),
      }),
    );
    return { status: res.status, json: (await res.json()) as any };
  };

  it("a PBX on the API's host but another port is accepted with allow_private_pbx", async () => {
    const org = await createOrg();
    await allow(org, true);
    for (const url of ["http://127.0.0.1:8088", "http://localhost:8088/ari", "http://127.0.0.1"]) {
      const res = await createAt(LOCAL_API, org, url);
      expect(res.status, `${url}: ${JSON.stringify(res.json)}`).toBe(200);
    }
  });

  it("the API's own origin (any loopback spelling of its port) is refused with allow_private_pbx, saying why and no hint", async () => {
    const org = await createOrg();
    await allow(org, true);
    for (const url of ["http://127.0.0.1:8787", "http://localhost:8787/ari", "https://[::1]:8787"]) {
      const res = await createAt(LOCAL_API, org, url);
      expect(res.status, url).toBe(422);
      expect(res.json.detail).toEqual([
        {
          loc: ["body", "config", "ari_endpoint"],
          msg: "Must not point at this service itself (http://127.0.0.1:8787)",
          type: "url_not_allowed",
          input: url,
        },
      ]);
    }
  });

  it("a default port is the scheme's: the API at http://127.0.0.1 is http://127.0.0.1:80, not :8080", async () => {
    const org = await createOrg();
    await allow(org, true);
    expect((await createAt("http://127.0.0.1", org, "http://127.0.0.1:80")).status).toBe(422);
    expect((await createAt("http://127.0.0.1", org, "http://127.0.0.1:8080")).status).toBe(200);
  });

  it("without allow_private_pbx a loopback PBX on another port is refused with the hint to set it", async () => {
    const org = await createOrg();
    const res = await createAt(LOCAL_API, org, "http://127.0.0.1:8088");
    expect(res.status).toBe(422);
    expect(res.json.detail[0].msg).toBe(
      "Must not point at a loopback address unless the organization allows private PBX addresses; set allow_private_pbx with PUT /api/v1/organizations/calling-policy to allow it",
    );
  });

  it("the public host (PUBLIC_BASE_URL) is the service on any port: Cloudflare's edge hands every proxied port to the Worker", async () => {
    const org = await createOrg();
    for (const url of ["http://edgedial.test/ari", "https://edgedial.test:8443"]) {
      const res = await createAt(LOCAL_API, org, url);
      expect(res.status, url).toBe(422);
      expect(res.json.detail[0].msg).toBe("Must not point at this service itself (http://edgedial.test)");
    }
  });
});
