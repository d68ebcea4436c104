// The whole way: an event goes through the WEBHOOKS queue to the Worker's queue handler and arrives, signed, at a
// receiver on 127.0.0.1 (allowed because the test Worker is local development, LOCAL_DEV).
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, inject, it } from "vitest";
import { emitEvent } from "../../src/webhooks/emit";
import { eventually } from "../calls/support";
import { call, createOrg } from "../helpers";
import { createEndpoint, deliveryRow } from "./support";

const BASE = `http://127.0.0.1:${inject("webhookReceiverPort")}`;
type Seen = { headers: Record<string, string>; body: string; answered: number };
const seen = async (key: string): Promise<Seen[]> => (await fetch(`${BASE}/_log?key=${key}`)).json();

describe("webhooks through the queue", () => {
  it("delivers a signed event to a real receiver, and a redelivery arrives with the same webhook-id", async () => {
    const org = await createOrg();
    const key = crypto.randomUUID();
    const ep = await createEndpoint(org, { url: `${BASE}/hook/${key}` });
    const [id] = await emitEvent(env, org.id, "run.completed", { run_id: 5 });

    const first = await eventually(
      () => seen(key),
      (s) => s.length === 1,
      10_000,
    );
    expect(new Webhook(ep.secret).verify(first[0].body, first[0].headers)).toMatchObject({ type: "run.completed", data: { run_id: 5 } });
    await eventually(
      () => deliveryRow(id),
      (d) => d?.status === "succeeded",
      5000,
    );

    expect((await call("POST", `/api/v1/webhooks/${ep.id}/deliveries/${id}/redeliver`, { key: org.key })).status).toBe(202);
    const both = await eventually(
      () => seen(key),
      (s) => s.length === 2,
      10_000,
    );
    expect(both[1].headers["webhook-id"]).toBe(both[0].headers["webhook-id"]);
    expect(both[1].body).toBe(both[0].body);
    expect(
      await eventually(
        () => deliveryRow(id),
        (d) => d?.status === "succeeded" && d.attempts === 2,
        5000,
      ),
    ).toBeTruthy();
  });
});
