// Calls that come in on Plivo and Vobiz (one application per configuration): attaching updates the application's
// answer and hangup URLs; a caller's signed answer request gets the media document and an inbound run; a forged or
// replayed request creates nothing; over the cap, Plivo XML's busy hang-up.
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { SDK_APPLICATION } from "./sdk-requests.global";
import type { Callback } from "../../src/dev/simulator/types";
import { organizationStub } from "../../src/organizations/organization-object";
import { call } from "../helpers";
import { ECHO_WORKER, fetchWorker } from "./media-support";
import { CALLER, callbackRequest, deliver, setup, sim, simRequests } from "./support";

const CALLING = "+14155550177";
const runsOf = async (orgId: number) => (await env.DB.prepare("SELECT * FROM workflow_runs WHERE org_id = ?").bind(orgId).all<Record<string, any>>()).results;

describe.each(["plivo", "vobiz"] as const)("inbound calls (%s)", (provider) => {
  async function attached() {
    const s = await setup(provider);
    const list = await call("GET", `/api/v1/organizations/telephony-configs/${s.configId}/phone-numbers`, { key: s.org.key });
    const res = await call("PUT", `/api/v1/organizations/telephony-configs/${s.configId}/phone-numbers/${list.json.items[0].id}`, {
      key: s.org.key,
      body: { inbound_workflow_id: s.agent.id },
    });
    expect(res.status, res.text).toBe(200);
    return { s, number: res.json };
  }
  const dial = async (acct: { id: string }) =>
    (await sim<{ callback: Callback }>("POST", `/accounts/${acct.id}/inbound`, { to: CALLER, from: CALLING })).callback;

  it("attaching updates the application's answer_url and hangup_url; a caller gets the stream and an inbound run", async () => {
    const { s, number } = await attached();
    const update = (await simRequests(s.acct)).find((r) => r.method === "POST" && /\/Application\/[^/]+\/$/.test(r.path));
    expect(JSON.parse(update!.body)).toEqual({ answer_url: number.inbound_url, answer_method: "POST", hangup_url: number.inbound_url, hangup_method: "POST" });
    // The request plivo's SDK makes (applications.update), but for is_voice_request, the SDK's own routing flag.
    const sdk = inject("sdkPlivoApplicationUpdate");
    const { is_voice_request: _, ...sdkBody } = sdk.body as Record<string, unknown>;
    expect(JSON.parse(update!.body.replaceAll(number.inbound_url, SDK_APPLICATION.url))).toEqual(sdkBody);
    expect([update!.method, update!.path.replace(/.*\/(Application\/)[^/]+\/$/, `$1${SDK_APPLICATION.id}/`)]).toEqual([sdk.method, sdk.url]);
    const res = await fetchWorker(callbackRequest(await dial(s.acct)), ECHO_WORKER);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toContain("<Stream");
    const runs = await runsOf(s.org.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ direction: "inbound", status: "in_progress", phone_number: CALLING, from_number: CALLER });
    expect(JSON.parse(runs[0].initial_context)).toMatchObject({ caller_number: CALLING, called_number: CALLER });
  });

  it("a forged signature, a missing one and a replay are refused; only the genuine request makes a run", async () => {
    const { s } = await attached();
    const cb = await dial(s.acct);
    const sig = provider === "plivo" ? "X-Plivo-Signature-V3" : "X-Vobiz-Signature-V3";
    expect((await deliver(cb, { headers: { [sig]: "Zm9yZ2Vk" } })).status).toBe(403);
    expect((await deliver(cb, { headers: { [sig]: null } })).status).toBe(403);
    expect(await runsOf(s.org.id)).toHaveLength(0);
    expect((await fetchWorker(callbackRequest(cb), ECHO_WORKER)).status).toBe(200);
    expect((await deliver(cb)).status).toBe(403); // the same nonce again
    expect(await runsOf(s.org.id)).toHaveLength(1);
  });

  it("over the concurrent-call cap the caller hears busy", async () => {
    const { s } = await attached();
    await organizationStub(env, s.org.id).setCap(1);
    await organizationStub(env, s.org.id).acquire({ leaseId: "held", ttlSeconds: 60 });
    const res = await fetchWorker(callbackRequest(await dial(s.acct)), ECHO_WORKER);
    expect(res.text).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Hangup reason="busy"/></Response>');
    expect(await runsOf(s.org.id)).toHaveLength(0);
  });
});
