// Campaign events: the D1 summary mirror sees each state change and emits campaign.state_changed, and
// campaign.completed when a campaign finishes.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, inject, it } from "vitest";
import { call } from "../helpers";
import { type FakeCarrier, resetWorld, tick } from "../campaigns/engine-harness";
import { draftCampaign, setupOrg } from "../campaigns/support";
import { createEndpoint } from "./support";
import { unwrap } from "../../src/campaigns/errors";

let carrier: FakeCarrier;
beforeEach(() => {
  carrier = resetWorld();
});

async function events(endpointId: number) {
  const { results } = await env.DB.prepare("SELECT event, payload FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY id").bind(endpointId).all<{
    event: string;
    payload: string;
  }>();
  return results.map((r) => ({ event: r.event, data: JSON.parse(r.payload).data }));
}

describe("campaign webhook events", () => {
  it("each state change is campaign.state_changed; finishing is also campaign.completed", async () => {
    const o = await setupOrg();
    // The campaign object emits with the real queue: its deliveries go to the local receiver (receiver.global.ts).
    const url = `http://127.0.0.1:${inject("webhookReceiverPort")}/hook/${crypto.randomUUID()}`;
    const ep = await createEndpoint(o.org, { url, events: ["campaign.state_changed", "campaign.completed"] });
    const { id, stub } = await draftCampaign(o, 1);
    await stub.updateSettings({ retry_config: { enabled: false } });
    expect((await call("POST", `/api/v1/campaign/${id}/start`, { key: o.org.key })).status).toBe(200);
    expect((await call("POST", `/api/v1/campaign/${id}/pause`, { key: o.org.key })).status).toBe(200);
    expect((await call("POST", `/api/v1/campaign/${id}/resume`, { key: o.org.key })).status).toBe(200);
    await tick(stub);
    for (const s of carrier.open(id)) await carrier.report(s, "completed");
    expect(unwrap(await stub.snapshot()).state).toBe("completed");

    expect(await events(ep.id)).toEqual([
      { event: "campaign.state_changed", data: { campaign_id: id, from_state: "draft", state: "running" } },
      { event: "campaign.state_changed", data: { campaign_id: id, from_state: "running", state: "paused" } },
      { event: "campaign.state_changed", data: { campaign_id: id, from_state: "paused", state: "running" } },
      { event: "campaign.state_changed", data: { campaign_id: id, from_state: "running", state: "completed" } },
      { event: "campaign.completed", data: { campaign_id: id, state: "completed" } },
    ]);
  });
});
