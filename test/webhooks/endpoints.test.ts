// Webhook endpoints through the API: create (secret once), list, read, update, delete, rotate; validation; isolation.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createOrg } from "../helpers";
import { createEndpoint, HOOK_URL } from "./support";

describe("webhook endpoints", () => {
  it("shows the secret once, masked afterwards, and stores it only encrypted", async () => {
    const org = await createOrg();
    const ep = await createEndpoint(org, { events: ["run.completed", "campaign.completed", "run.completed"], description: "ops" });
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(ep).toMatchObject({ url: HOOK_URL, events: ["run.completed", "campaign.completed"], enabled: true, description: "ops" });
    expect(ep.secret_masked).toBe(`whsec_********${ep.secret.slice(-4)}`);

    const read = await call("GET", `/api/v1/webhooks/${ep.id}`, { key: org.key });
    expect(read.status).toBe(200);
    expect(read.json.secret).toBeUndefined();
    expect(read.text).not.toContain(ep.secret.slice(6, 20));
    const list = await call("GET", "/api/v1/webhooks", { key: org.key });
    expect(list.json.items.map((i: { id: number }) => i.id)).toEqual([ep.id]);
    expect(list.text).not.toContain(ep.secret.slice(6, 20));

    const row = await env.DB.prepare("SELECT * FROM webhook_endpoints WHERE id = ?").bind(ep.id).first<Record<string, string>>();
    expect(JSON.stringify(row)).not.toContain(ep.secret.slice(6));
    expect(JSON.parse(row!.secret)).toMatchObject({ kid: "t1" });
  });

  it("updates, rotates the secret and deletes", async () => {
    const org = await createOrg();
    const ep = await createEndpoint(org);
    const patched = await call("PATCH", `/api/v1/webhooks/${ep.id}`, {
      key: org.key,
      body: { url: "https://other.example.com/h", events: ["campaign.state_changed"], enabled: false },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json).toMatchObject({ url: "https://other.example.com/h", events: ["campaign.state_changed"], enabled: false });

    const rotated = await call("POST", `/api/v1/webhooks/${ep.id}/rotate-secret`, { key: org.key });
    expect(rotated.status).toBe(200);
    expect(rotated.json.secret).toMatch(/^whsec_/);
    expect(rotated.json.secret).not.toBe(ep.secret);

    expect((await call("DELETE", `/api/v1/webhooks/${ep.id}`, { key: org.key })).status).toBe(204);
    expect((await call("GET", `/api/v1/webhooks/${ep.id}`, { key: org.key })).status).toBe(404);
    expect((await call("DELETE", `/api/v1/webhooks/${ep.id}`, { key: org.key })).status).toBe(404);
  });

  it("another organization's endpoint is a 404 everywhere", async () => {
    const [mine, theirs] = [await createOrg(), await createOrg()];
    const ep = await createEndpoint(mine);
    const k = { key: theirs.key };
    expect((await call("GET", `/api/v1/webhooks/${ep.id}`, k)).status).toBe(404);
    expect((await call("PATCH", `/api/v1/webhooks/${ep.id}`, { ...k, body: { enabled: false } })).status).toBe(404);
    expect((await call("POST", `/api/v1/webhooks/${ep.id}/rotate-secret`, k)).status).toBe(404);
    expect((await call("GET", `/api/v1/webhooks/${ep.id}/deliveries`, k)).status).toBe(404);
    expect((await call("DELETE", `/api/v1/webhooks/${ep.id}`, k)).status).toBe(404);
    expect((await call("GET", "/api/v1/webhooks", k)).json.items).toEqual([]);
    expect((await call("GET", `/api/v1/webhooks/${ep.id}`, { key: mine.key })).json.enabled).toBe(true);
  });

  it("refuses unknown events, bad URLs and unknown fields with located 422s", async () => {
    const org = await createOrg();
    const post = (body: unknown) => call("POST", "/api/v1/webhooks", { key: org.key, body });
    const unknown = await post({ url: HOOK_URL, events: ["run.completed", "call.exploded"] });
    expect(unknown.status).toBe(422);
    expect(unknown.json.detail[0]).toMatchObject({ loc: ["body", "events", 1], type: "enum", input: "call.exploded" });
    expect((await post({ url: HOOK_URL, events: [] })).json.detail[0]).toMatchObject({ loc: ["body", "events"], type: "too_short" });
    expect((await post({ events: ["run.completed"] })).json.detail[0]).toMatchObject({ loc: ["body", "url"], type: "missing" });
    expect((await post({ url: HOOK_URL, events: ["run.completed"], secret: "x" })).json.detail[0]).toMatchObject({
      loc: ["body", "secret"],
      type: "extra_forbidden",
    });
    for (const url of [
      "ftp://example.com/h",
      "not a url",
      "http://169.254.169.254/latest",
      "https://user:pw@example.com/h",
      "http://edgedial.test/api/v1/health",
    ]) {
      const res = await post({ url, events: ["run.completed"] });
      expect(res.status, url).toBe(422);
      expect(res.json.detail[0], url).toMatchObject({ loc: ["body", "url"], type: "url_refused" });
    }
    const ep = await createEndpoint(org);
    const bad = await call("PATCH", `/api/v1/webhooks/${ep.id}`, { key: org.key, body: { url: "http://[fd00:ec2::254]/" } });
    expect(bad.status).toBe(422);
    expect((await call("GET", "/api/v1/webhooks/abc", { key: org.key })).status).toBe(404);
  });
});
