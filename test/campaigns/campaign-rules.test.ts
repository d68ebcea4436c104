// Review of the campaign engine and routes against the campaign rules (and the error shapes).
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { call } from "../helpers";
import { type FakeCarrier, makeCampaign, resetWorld, tick } from "./engine-harness";
import { draftCampaign as draft, setupOrg } from "./support";
import { unwrap } from "../../src/campaigns/errors";
const draftCampaign = (o: Parameters<typeof draft>[0], n = 3) => draft(o, n, "review");

let carrier: FakeCarrier;
beforeEach(() => {
  carrier = resetWorld();
});

/** A new organization's campaign of 2 contacts (retries off), started over HTTP and completed with every call `outcome`: one to redial. */
async function finished(outcome: "busy" | "no_answer") {
  const o = await setupOrg();
  const { id, stub } = await draftCampaign(o, 2);
  await stub.updateSettings({ retry_config: { enabled: false } });
  expect((await call("POST", `/api/v1/campaign/${id}/start`, { key: o.org.key })).status).toBe(200);
  await tick(stub);
  for (const s of carrier.open(id)) await carrier.report(s, outcome);
  expect(unwrap(await stub.snapshot()).state).toBe("completed");
  return { o, id, stub };
}

describe("review: redial body (malformed JSON is 422 json_invalid)", () => {
  it("a malformed JSON body is refused with 422 json_invalid and creates no child", async () => {
    const { o, id, stub } = await finished("busy");

    const bad = await call("POST", `/api/v1/campaign/${id}/redial`, { key: o.org.key, raw: '{"outcomes": ["busy"' });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.json.detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
    expect(unwrap(await stub.snapshot()).redialed_campaign_id).toBeNull();

    // No body at all still means the default outcomes.
    const child = await call("POST", `/api/v1/campaign/${id}/redial`, { key: o.org.key });
    expect(child.status, child.text).toBe(200);
    expect(child.json).toMatchObject({ state: "draft", parent_campaign_id: id, total_rows: 2 });
  });
});

describe("review: progress percentages (processed / total × 100)", () => {
  it("is exactly processed / total × 100, in both field sets", async () => {
    const { stub } = await makeCampaign({ contacts: 3, settings: { rate_limit: 1, max_concurrency: 1 }, start: true });
    await tick(stub);
    const p = unwrap(await stub.progress());
    expect([p.processed, p.total]).toEqual([1, 3]);
    expect(p.progress_percentage).toBe((1 / 3) * 100);
    expect(p.completion_percentage).toBe((1 / 3) * 100);
  });
});

describe("review: redial of an archived agent's campaign (archived agents take no new campaigns)", () => {
  it("is refused with 409 and creates nothing; after a restore the redial works", async () => {
    const { o, id, stub } = await finished("no_answer");
    const campaignsOf = async () => (await env.DB.prepare("SELECT count(*) AS n FROM campaigns WHERE org_id = ?").bind(o.org.id).first<{ n: number }>())!.n;
    const before = await campaignsOf();

    expect((await call("PUT", `/api/v1/workflow/${o.workflowId}/status`, { key: o.org.key, body: { status: "archived" } })).status).toBe(200);
    const refused = await call("POST", `/api/v1/campaign/${id}/redial`, { key: o.org.key });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json).toEqual({ detail: "Workflow is archived" });
    expect(await campaignsOf()).toBe(before);
    expect(unwrap(await stub.snapshot()).redialed_campaign_id).toBeNull();

    expect((await call("PUT", `/api/v1/workflow/${o.workflowId}/status`, { key: o.org.key, body: { status: "active" } })).status).toBe(200);
    const child = await call("POST", `/api/v1/campaign/${id}/redial`, { key: o.org.key });
    expect(child.status, child.text).toBe(200);
    expect(child.json).toMatchObject({ state: "draft", parent_campaign_id: id, total_rows: 2 });
  });
});

describe("review: breaker window reset on start/resume from paused", () => {
  const breaker = { enabled: true, failure_threshold: 0.5, window_seconds: 120, min_calls_in_window: 5 };
  for (const op of ["start", "resume"] as const)
    it(`${op} right after a trip (same instant) runs again: the failures that tripped it are behind the reset`, async () => {
      const { id, stub } = await makeCampaign({
        contacts: 20,
        settings: { rate_limit: 50, max_concurrency: 10, retry_config: { enabled: false }, circuit_breaker: breaker },
        start: true,
      });
      await tick(stub);
      const calls = carrier.open(id);
      for (let i = 0; i < 4; i++) await carrier.report(calls[i], "failed");
      expect(unwrap(await stub.snapshot()).state).toBe("running"); // 4 < min_calls_in_window
      await carrier.report(calls[4], "failed");
      expect(unwrap(await stub.snapshot()).state).toBe("paused");
      // No time passes: the user reacts at once (the clock is the same millisecond).
      const again = unwrap(await stub[op]());
      expect(again.state).toBe("running");
      expect(again.logs[0].event).toBe("campaign_resumed");
      // One more failure after the reset is 1 of 1 finished: below min_calls_in_window, so no trip.
      await carrier.report(calls[5], "failed");
      expect(unwrap(await stub.snapshot()).state).toBe("running");
    });
});
