// Secrets: nothing secret is ever returned, including passwords written into a URL.
import { describe, expect, it } from "vitest";
import { call, createOrg } from "../helpers";

const CONFIGS = "/api/v1/organizations/telephony-configs";
const PW = "URLPASSWORD-leak-canary";

describe("ari_endpoint with a password in its userinfo", () => {
  it("is refused on create (422) without echoing the password, and nothing is stored", async () => {
    const org = await createOrg();
    for (const endpoint of [`http://asterisk:${PW}@pbx.example.test:8088`, `http://asterisk:${PW}@pbx.example.test:notaport`]) {
      const res = await call("POST", CONFIGS, {
        key: org.key,
        body: { name: `ari-${crypto.randomUUID()}`, config: { provider: "ari", ari_endpoint: endpoint, app_name: "edgedial", app_password: "app-pass-1234" } },
      });
      expect(res.status, res.text).toBe(422);
      expect(res.text).not.toContain(PW);
      expect(res.json.detail[0].loc).toEqual(["body", "config", "ari_endpoint"]);
    }
    const list = await call("GET", CONFIGS, { key: org.key });
    expect(list.json.items).toEqual([]);
  });

  it("is refused on update (422) without echoing the password; the stored endpoint is unchanged", async () => {
    const org = await createOrg();
    const created = await call("POST", CONFIGS, {
      key: org.key,
      body: {
        name: "ari",
        config: { provider: "ari", ari_endpoint: "http://asterisk@pbx.example.test:8088", app_name: "edgedial", app_password: "app-pass-1234" },
      },
    });
    expect(created.status, created.text).toBe(200);
    const res = await call("PUT", `${CONFIGS}/${created.json.id}`, {
      key: org.key,
      body: { config: { ari_endpoint: `http://asterisk:${PW}@pbx.example.test:8088` } },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.text).not.toContain(PW);
    const got = await call("GET", `${CONFIGS}/${created.json.id}`, { key: org.key });
    expect(got.json.credentials.ari_endpoint).toBe("http://asterisk@pbx.example.test:8088");
  });
});
