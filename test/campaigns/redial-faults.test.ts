// Redial faults found by fuzzing: a bare POST is `{}` like the other actions, and a campaign whose
// telephony configuration was deleted after it finished is a 409 naming the reason, never a 500.
import { env, exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { redialCampaign } from "../../src/campaigns/redial";
import { ApiError } from "../../src/lib/errors";
import { call } from "../helpers";
import { type FakeCarrier, resetWorld, tick } from "./engine-harness";
import { draftCampaign, setupOrg } from "./support";
import { unwrap } from "../../src/campaigns/errors";

let carrier: FakeCarrier;
beforeEach(() => {
  carrier = resetWorld();
});

async function finishedCampaign() {
  const o = await setupOrg();
  const { id, stub } = await draftCampaign(o, 2, "redial faults");
  await stub.updateSettings({ retry_config: { enabled: false } });
  expect((await call("POST", `/api/v1/campaign/${id}/start`, { key: o.org.key })).status).toBe(200);
  await tick(stub);
  for (const s of carrier.open(id)) await carrier.report(s, "busy");
  expect(unwrap(await stub.snapshot()).state).toBe("completed");
  return { o, id, stub };
}

const campaignsOf = async (orgId: number) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM campaigns WHERE org_id = ?").bind(orgId).first<{ n: number }>())!.n;

describe("redial: a bare POST", () => {
  it("with an empty body and no Content-Type (as curl -X POST sends it) means the default outcomes, not a 415", async () => {
    const { o, id } = await finishedCampaign();
    // An empty byte body carries no Content-Type (a string body would get text/plain).
    const res = await exports.default.fetch(
      new Request(`http://edgedial.test/api/v1/campaign/${id}/redial`, { method: "POST", headers: { "X-API-Key": o.org.key }, body: new Uint8Array(0) }),
    );
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ state: "draft", parent_campaign_id: id, total_rows: 2 });
  });

  it("a non-empty body without a JSON Content-Type is still refused (415)", async () => {
    const { o, id } = await finishedCampaign();
    const res = await call("POST", `/api/v1/campaign/${id}/redial`, { key: o.org.key, raw: "outcomes=busy", headers: { "Content-Type": "text/plain" } });
    expect(res.status).toBe(415);
  });
});

describe("redial: the configuration was deleted after the campaign finished", () => {
  it("is a 409 with the reason and creates nothing", async () => {
    const { o, id, stub } = await finishedCampaign();
    const before = await campaignsOf(o.org.id);
    const del = await call("DELETE", `/api/v1/organizations/telephony-configs/${o.configId}`, { key: o.org.key });
    expect(del.status, del.text).toBe(200);

    const res = await call("POST", `/api/v1/campaign/${id}/redial`, { key: o.org.key });
    expect(res.status, res.text).toBe(409);
    expect(res.json.detail).toMatch(/telephony configuration .*(deleted|no longer exists)/i);
    expect(await campaignsOf(o.org.id)).toBe(before);
    expect(unwrap(await stub.snapshot()).redialed_campaign_id).toBeNull();
  });

  it("a configuration deleted between the route's check and the insert is a 409 too (the foreign key refuses it)", async () => {
    const { o, id, stub } = await finishedCampaign();
    const before = await campaignsOf(o.org.id);
    const err = await redialCampaign(env, id, ["busy"], 2_000_000_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(409);
    expect(await campaignsOf(o.org.id)).toBe(before);
    expect(unwrap(await stub.snapshot()).redialed_campaign_id).toBeNull();
  });
});
