// Dispatch: concurrency, the organization cap, pacing, pause, completion.
import { beforeEach, describe, expect, it } from "vitest";
import { clock } from "../../src/lib/clock";
import { FakeCarrier, advance, makeCampaign, orgStub, resetWorld, sqlOf, tick } from "./engine-harness";

let carrier: FakeCarrier;
beforeEach(() => {
  carrier = resetWorld();
});

describe("dispatch", () => {
  it("starts nothing before start, then dials up to max_concurrency, no faster than rate_limit", async () => {
    const { id, stub } = await makeCampaign({ contacts: 10, settings: { max_concurrency: 3, rate_limit: 2 } });
    await tick(stub);
    expect(carrier.started).toHaveLength(0);
    await stub.start();
    await tick(stub);
    expect(carrier.open(id)).toHaveLength(2); // rate_limit 2 per second
    await advance(1000, stub);
    expect(carrier.open(id)).toHaveLength(3); // max_concurrency
    await advance(5000, stub);
    expect(carrier.open(id)).toHaveLength(3);
    const req = carrier.started[0].req;
    expect(req).toMatchObject({ campaignId: id, attempt: 1, phoneNumber: "+14155550000", initialContext: { i: "0" }, leaseId: `campaign:${id}:${req.contactId}:1` });
    const p = await stub.progress();
    expect(p).toMatchObject({ state: "running", total: 10, processed: 3, pending: 7, in_progress: 3 });
  });
});
