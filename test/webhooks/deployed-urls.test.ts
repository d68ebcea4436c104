// Webhook URLs on a deployed Worker (no LOCAL_DEV, an https PUBLIC_BASE_URL): private, loopback, CGNAT, local-name
// and link-local targets are refused at save (create and update: a 422 in the contract's validation shape) and again
// before a delivery. The pool's Worker is local development, where the same private URLs are allowed; each case
// shows that too, so a refusal here is the deployment's.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { deliverWebhooks } from "../../src/webhooks/deliver";
import { emitEvent } from "../../src/webhooks/emit";
import { call, createOrg } from "../helpers";
import { createEndpoint, deliveryRow, fakeBatch, HOOK_URL, receiver, recordingEnv } from "./support";

const ORIGIN = "https://dial.example.com";
const DEPLOYED = { ...env, PUBLIC_BASE_URL: ORIGIN, LOCAL_DEV: "" } as Env;

/** The Worker as deployed, over HTTP. */
async function deployedCall(method: string, path: string, key: string, body?: unknown) {
  const res = await worker.fetch(
    new Request(`${ORIGIN}${path}`, {
      method,
      headers: { "X-API-Key": key, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    DEPLOYED,
    createExecutionContext(),
  );
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, text };
}

// https, so only the address decides (http alone is refused on a deployed Worker).
const PRIVATE = [
  "https://127.0.0.1/hook",
  "https://127.8.9.10:8443/hook",
  "https://localhost/hook",
  "https://hooks.localhost/hook",
  "https://[::1]/hook",
  "https://10.1.2.3/hook",
  "https://172.16.0.9/hook",
  "https://192.168.1.20/hook",
  "https://[fd12:3456::1]/hook",
  "https://[::ffff:192.168.1.20]/hook",
  "https://2130706433/hook",
  "https://100.64.0.1/hook",
  "https://receiver.internal/hook",
  "https://printer.local/hook",
];
const NEVER = ["https://169.254.10.10/hook", "https://[fe80::1]/hook", "https://169.254.169.254/latest"];

const expectRefused = (res: { status: number; json: any; text: string }, url: string) => {
  expect(res.status, `${url}: ${res.text}`).toBe(422);
  expect(res.json, url).toEqual({
    detail: [{ loc: ["body", "url"], msg: expect.stringMatching(/^Must not point at a /), type: "url_refused", input: url }],
  });
};

describe("webhook URLs on a deployed Worker", () => {
  it("the deployed Worker accepts a public https URL (the baseline)", async () => {
    const org = await createOrg();
    const res = await deployedCall("POST", "/api/v1/webhooks", org.key, { url: HOOK_URL, events: ["run.completed"] });
    expect(res.status, res.text).toBe(201);
  });

  it.each(PRIVATE)("create refuses %s with a 422 (local development accepts it)", async (url) => {
    const org = await createOrg();
    expectRefused(await deployedCall("POST", "/api/v1/webhooks", org.key, { url, events: ["run.completed"] }), url);
    expect((await call("GET", "/api/v1/webhooks", { key: org.key })).json.items).toEqual([]);
    // The same request to the pool's Worker (local development) is accepted: the refusal above is the deployment's.
    const local = await call("POST", "/api/v1/webhooks", { key: org.key, body: { url, events: ["run.completed"] } });
    expect(local.status, local.text).toBe(201);
  });

  it.each(NEVER)("create refuses %s (link-local or metadata: never, anywhere)", async (url) => {
    const org = await createOrg();
    expectRefused(await deployedCall("POST", "/api/v1/webhooks", org.key, { url, events: ["run.completed"] }), url);
    expect((await call("POST", "/api/v1/webhooks", { key: org.key, body: { url, events: ["run.completed"] } })).status).toBe(422);
  });

  it("update refuses a private URL and leaves the endpoint as it was", async () => {
    const org = await createOrg();
    const ep = await createEndpoint(org);
    for (const url of ["https://10.0.0.7/h", "https://[::1]/h", "https://localhost:8443/h"]) {
      expectRefused(await deployedCall("PATCH", `/api/v1/webhooks/${ep.id}`, org.key, { url }), url);
    }
    expect((await call("GET", `/api/v1/webhooks/${ep.id}`, { key: org.key })).json.url).toBe(HOOK_URL);
  });

  it("the service's own host is refused on any port (Cloudflare's edge hands each proxied port to the Worker), saying why", async () => {
    const org = await createOrg();
    for (const url of [`${ORIGIN}/api/v1/health`, "https://dial.example.com:8443/hook", "https://DIAL.example.com./hook"]) {
      const res = await deployedCall("POST", "/api/v1/webhooks", org.key, { url, events: ["run.completed"] });
      expect(res.status, `${url}: ${res.text}`).toBe(422);
      expect(res.json.detail[0]).toMatchObject({ msg: `Must not point at this service itself (${ORIGIN})`, type: "url_refused" });
    }
    // Another host of the same domain is someone else.
    expect((await deployedCall("POST", "/api/v1/webhooks", org.key, { url: "https://hooks.example.com/h", events: ["run.completed"] })).status).toBe(201);
  });

  it("in local development another port of the service's own host is another service (a receiver beside it), its own port is not", async () => {
    const org = await createOrg();
    const local = { ...env, PUBLIC_BASE_URL: "http://127.0.0.1:8787", LOCAL_DEV: "1" } as Env;
    const at = async (url: string) =>
      worker.fetch(
        new Request("http://127.0.0.1:8787/api/v1/webhooks", {
          method: "POST",
          headers: { "X-API-Key": org.key, "Content-Type": "application/json" },
          body: JSON.stringify({ url, events: ["run.completed"] }),
        }),
        local,
        createExecutionContext(),
      );
    expect((await at("http://127.0.0.1:9000/hook")).status).toBe(201);
    const own = await at("http://localhost:8787/api/v1/health");
    expect(own.status).toBe(422);
    expect(((await own.json()) as any).detail[0].msg).toBe("Must not point at this service itself (http://127.0.0.1:8787)");
  });

  it("a delivery to an endpoint saved with a private URL (in local development) is refused when deployed, with no request", async () => {
    const org = await createOrg();
    const ep = await createEndpoint(org, { url: "https://192.168.1.20/hook" });
    const { env: fake } = recordingEnv();
    const [id, local] = [...(await emitEvent(fake, org.id, "run.completed", {})), ...(await emitEvent(fake, org.id, "run.completed", {}))];
    const { fetcher, received } = receiver(200);

    const deployed = fakeBatch([id]);
    await deliverWebhooks(deployed.batch, DEPLOYED, fetcher);
    expect(deployed.log).toEqual({ acked: [id], retried: [] });
    expect(received).toHaveLength(0);
    expect(await deliveryRow(id)).toMatchObject({ status: "failed", last_error: expect.stringMatching(/^URL refused: Must not point at a private/) });

    // Local development delivers to it.
    await deliverWebhooks(fakeBatch([local]).batch, env, fetcher);
    expect(received.map((r) => r.url)).toEqual([ep.url]);
    expect(await deliveryRow(local)).toMatchObject({ status: "succeeded" });
  });
});
