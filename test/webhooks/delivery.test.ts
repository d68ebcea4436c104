// Deliveries: emitEvent writes rows and queues them; the consumer (driven with a fake batch and a recording receiver)
// signs per Standard Webhooks, retries with exponential backoff, gives up after MAX_ATTEMPTS; redelivery resends the
// same message; a run reaching a final status emits run.completed.
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { applyStatus } from "../../src/calls/runs/status";
import { workflowRuns } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";
import { redeliver } from "../../src/webhooks/deliveries";
import { backoffSeconds, deliverWebhooks, MAX_ATTEMPTS } from "../../src/webhooks/deliver";
import { emitEvent } from "../../src/webhooks/emit";
import { createAgent } from "../calls/support";
import { call, createOrg } from "../helpers";
import { createEndpoint, deliveryRow, fakeBatch, receiver, recordingEnv } from "./support";

/** A new organization's endpoint for every event, and a run.completed event with `data` emitted to it: its delivery. */
async function oneDelivery(data: Record<string, unknown>) {
  const org = await createOrg();
  const ep = await createEndpoint(org);
  const { env: fake } = recordingEnv();
  const [id] = await emitEvent(fake, org.id, "run.completed", data);
  return { org, ep, fake, id };
}

describe("webhook deliveries", () => {
  it("emits to subscribed, enabled endpoints only, and queues one message per delivery", async () => {
    const org = await createOrg();
    const runs = await createEndpoint(org, { events: ["run.completed"] });
    await createEndpoint(org, { events: ["campaign.completed"] });
    const off = await createEndpoint(org, { events: ["run.completed"] });
    await call("PATCH", `/api/v1/webhooks/${off.id}`, { key: org.key, body: { enabled: false } });
    const other = await createOrg();
    await createEndpoint(other, { events: ["run.completed"] });

    const { env: fake, sent } = recordingEnv();
    const ids = await emitEvent(fake, org.id, "run.completed", { run_id: 1 });
    expect(ids).toHaveLength(1);
    expect(sent).toEqual([{ deliveryId: ids[0] }]);
    const row = await deliveryRow(ids[0]);
    expect(row).toMatchObject({ status: "pending", attempts: 0 });
    expect(row!.message_id).toMatch(/^msg_/);
    expect(JSON.parse(row!.payload)).toMatchObject({ type: "run.completed", data: { run_id: 1 } });
    const log = await call("GET", `/api/v1/webhooks/${runs.id}/deliveries`, { key: org.key });
    expect(log.json.items).toEqual([expect.objectContaining({ id: ids[0], event: "run.completed", status: "pending", attempts: 0 })]);
  });

  it("signs each request so that the standardwebhooks library verifies it, and marks success", async () => {
    const { ep, id } = await oneDelivery({ run_id: 42 });
    const { fetcher, received } = receiver(204);
    const { batch, log } = fakeBatch([id]);
    await deliverWebhooks(batch, env, fetcher);

    expect(log).toEqual({ acked: [id], retried: [] });
    expect(received).toHaveLength(1);
    const [req] = received;
    expect(req.url).toBe(ep.url);
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Math.abs(Number(req.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
    const verified = new Webhook(ep.secret).verify(req.body, req.headers);
    expect(verified).toMatchObject({ type: "run.completed", data: { run_id: 42 } });
    // Another secret, or a changed body, does not verify.
    expect(() => new Webhook(`whsec_${btoa("x".repeat(24))}`).verify(req.body, req.headers)).toThrow();
    expect(() => new Webhook(ep.secret).verify(req.body.replace("42", "43"), req.headers)).toThrow();

    expect(await deliveryRow(id)).toMatchObject({ status: "succeeded", attempts: 1, last_response_status: 204, last_error: null });
    // A duplicate message for a delivered event sends nothing.
    await deliverWebhooks(fakeBatch([id]).batch, env, fetcher);
    expect(received).toHaveLength(1);
  });

  it("retries a failing endpoint with exponential backoff, then marks the delivery failed", async () => {
    const { org, ep, id } = await oneDelivery({ run_id: 7 });
    const { fetcher, received } = receiver(500);
    const delays: (number | undefined)[] = [];
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      const { batch, log } = fakeBatch([id], attempt);
      await deliverWebhooks(batch, env, fetcher);
      expect(log.acked).toEqual([]);
      delays.push(log.retried[0]?.delaySeconds);
      expect(await deliveryRow(id)).toMatchObject({ status: "pending", attempts: attempt, last_response_status: 500, last_error: "Endpoint answered 500" });
    }
    expect(delays).toEqual([10, 20, 40, 80, 160, 320, 640]);
    expect(backoffSeconds(20)).toBe(3600);
    const last = fakeBatch([id], MAX_ATTEMPTS);
    await deliverWebhooks(last.batch, env, fetcher);
    expect(last.log).toEqual({ acked: [id], retried: [] });
    expect(await deliveryRow(id)).toMatchObject({ status: "failed", attempts: MAX_ATTEMPTS });
    // Every attempt carried the same webhook-id and body.
    expect(new Set(received.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);

    const log = await call("GET", `/api/v1/webhooks/${ep.id}/deliveries`, { key: org.key });
    expect(log.json.items[0]).toMatchObject({ id, status: "failed", attempts: MAX_ATTEMPTS, last_response_status: 500 });
  });

  it("a network failure is retried; a disabled endpoint or a URL now refused fails without a request", async () => {
    const { org, ep, fake, id } = await oneDelivery({});
    const down = fakeBatch([id]);
    await deliverWebhooks(down.batch, env, async () => {
      throw new Error("connection refused");
    });
    expect(down.log.retried).toEqual([{ id, delaySeconds: 10 }]);
    expect((await deliveryRow(id))!.last_error).toMatch(/connection refused/);

    const [again] = await emitEvent(fake, org.id, "run.completed", {});
    await env.DB.prepare("UPDATE webhook_endpoints SET url = 'http://169.254.169.254/' WHERE id = ?").bind(ep.id).run();
    const { fetcher, received } = receiver(200);
    const refused = fakeBatch([again]);
    await deliverWebhooks(refused.batch, env, fetcher);
    expect(refused.log.acked).toEqual([again]);
    expect(received).toHaveLength(0);
    expect((await deliveryRow(again))!).toMatchObject({ status: "failed" });
    expect((await deliveryRow(again))!.last_error).toMatch(/^URL refused/);
  });

  it("redelivery queues the same webhook-id and body again; another organization's delivery is a 404", async () => {
    const { org, ep, id } = await oneDelivery({ run_id: 9 });
    const { fetcher, received } = receiver(200);
    await deliverWebhooks(fakeBatch([id]).batch, env, fetcher);
    expect((await deliveryRow(id))!.status).toBe("succeeded");

    // Through the store with a recording queue (queue.test.ts goes through the route and the real queue).
    const { env: fake2, sent } = recordingEnv();
    expect(await redeliver(fake2, getDb(env), org.id, ep.id, id)).toMatchObject({ id, status: "pending" });
    expect(sent).toEqual([{ deliveryId: id }]);
    await deliverWebhooks(fakeBatch([id]).batch, env, fetcher);
    expect(received).toHaveLength(2);
    expect(received[1].headers["webhook-id"]).toBe(received[0].headers["webhook-id"]);
    expect(received[1].body).toBe(received[0].body);
    expect(new Webhook(ep.secret).verify(received[1].body, received[1].headers)).toMatchObject({ data: { run_id: 9 } });

    const other = await createOrg();
    expect((await call("POST", `/api/v1/webhooks/${ep.id}/deliveries/${id}/redeliver`, { key: other.key })).status).toBe(404);
    expect((await call("POST", `/api/v1/webhooks/${ep.id}/deliveries/999999/redeliver`, { key: org.key })).status).toBe(404);
  });

  it("a run reaching a final status emits run.completed once", async () => {
    const org = await createOrg();
    await createEndpoint(org);
    const agent = await createAgent(org);
    const run = await env.DB.prepare(
      "INSERT INTO workflow_runs (org_id, name, workflow_id, workflow_uuid, phone_number, status) VALUES (?, ?, ?, ?, '+14155550123', 'ringing') RETURNING *",
    )
      .bind(org.id, `WR-T${crypto.randomUUID().slice(0, 8)}`, agent.id, agent.workflow_uuid)
      .first<{ id: number }>();
    const { env: fake, sent } = recordingEnv();
    // applyStatus takes the run as drizzle reads it.
    const row = async () => (await getDb(env).select().from(workflowRuns).where(eq(workflowRuns.id, run!.id)).get())!;
    await applyStatus(fake, await row(), { status: "in_progress" });
    expect(sent).toHaveLength(0);
    await applyStatus(fake, await row(), { status: "completed", durationSeconds: 5 });
    await applyStatus(fake, await row(), { status: "completed", durationSeconds: 5 });
    await applyStatus(fake, await row(), { status: "busy" });
    expect(sent).toHaveLength(1);
    const d = await deliveryRow(sent[0].deliveryId);
    expect(JSON.parse(d!.payload)).toMatchObject({
      type: "run.completed",
      data: { run_id: run!.id, status: "completed", duration_seconds: 5, workflow_id: agent.id, campaign_id: null },
    });
  });
});
