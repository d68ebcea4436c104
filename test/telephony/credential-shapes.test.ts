// Carrier credentials whose form the carrier documents are checked on save (a located 422 that says the expected
// form and never repeats a secret): Twilio's account SID, Plivo's Auth ID, Vonage's application id and private key.
import { describe, expect, it } from "vitest";
import { createOrg } from "../helpers";
import { api, CONFIGS, canary } from "./support";

const PEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n";
const vonage = (over: Record<string, unknown>) => ({
  provider: "vonage",
  api_key: "a1b2c3d4",
  api_secret: canary("vonage_secret"),
  application_id: "aaaaaaaa-0000-4000-8000-000000000001",
  private_key: PEM,
  ...over,
});

describe("Vonage credential shapes", () => {
  it("an application id that is not a UUID is a located 422 naming the form", async () => {
    const org = await createOrg();
    const res = await api("POST", CONFIGS, { key: org.key, body: { name: "v", config: vonage({ application_id: "app-1" }) } });
    expect(res.status).toBe(422);
    expect(res.json.detail[0]).toMatchObject({ loc: ["body", "config", "application_id"] });
    expect(res.json.detail[0].msg).toMatch(/UUID/);
  });

  it("a private key that is not a PEM key is a located 422 that does not echo it", async () => {
    const org = await createOrg();
    const secretValue = canary("not_a_pem");
    const res = await api("POST", CONFIGS, { key: org.key, body: { name: "v", config: vonage({ private_key: secretValue }) } });
    expect(res.status).toBe(422);
    expect(res.json.detail[0]).toMatchObject({ loc: ["body", "config", "private_key"] });
    expect(res.json.detail[0].msg).toMatch(/PEM/);
    expect(res.text).not.toContain(secretValue);
  });

  it("accepts PKCS#8 and PKCS#1 keys, with real or escaped newlines, and a UUID in either case", async () => {
    const org = await createOrg();
    const keys = [PEM, PEM.replace(/PRIVATE KEY/g, "RSA PRIVATE KEY"), PEM.replace(/\n/g, "\\n"), `  ${PEM}`];
    for (const [i, private_key] of keys.entries()) {
      const res = await api("POST", CONFIGS, {
        key: org.key,
        body: { name: `v${i}`, config: vonage({ private_key, application_id: `AAAAAAAA-0000-4000-8000-00000000000${i}` }) },
      });
      expect(res.status, res.text).toBe(200);
    }
  });

  it("a PUT is held to the same shapes", async () => {
    const org = await createOrg();
    const made = await api("POST", CONFIGS, { key: org.key, body: { name: "v", config: vonage({}) } });
    expect(made.status, made.text).toBe(200);
    const bad = await api("PUT", `${CONFIGS}/${made.json.id}`, { key: org.key, body: { config: { application_id: "not-a-uuid" } } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["body", "config", "application_id"]);
  });
});
