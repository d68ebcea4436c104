// Calls that come in on Cloudonix: attaching updates the voice application's url (PATCH); the application's request
// for an incoming call (unsigned, as Cloudonix documents no signature: the inbound URL's token is the proof) gets the
// CXML stream and an inbound run, the caller talks with the agent and the session's CDR ends the run; over the cap
// CXML's busy Reject (as twilio's VoiceResponse writes it); a number without an agent gets the apology.
import { env } from "cloudflare:workers";
import VoiceResponse from "twilio/lib/twiml/VoiceResponse";
import { describe, expect, it } from "vitest";
import { organizationStub } from "../../src/organizations/organization-object";
import { call } from "../helpers";
import { listen, listenUntil, prepareScripted, SURE } from "./conversation-support";
import { connect, ECHO_WORKER, fetchWorker } from "./media-support";
import { CALLER, callbackRequest, deliver, flush, simRequests } from "./support";
import { attach, CALLING, dial, inboundSetup, runsOf } from "./inbound-support";

describe("inbound calls (Cloudonix)", () => {
  it("attaching updates the voice application's url; a caller reaches the agent and the run completes inbound", async () => {
    const { s, agentId, number } = await inboundSetup("cloudonix");
    const patch = (await simRequests(s.acct)).find((r) => r.method === "PATCH")!;
    expect(patch.path).toMatch(/^\/customers\/self\/domains\/[^/]+\/applications\/[^/]+$/);
    expect(JSON.parse(patch.body)).toEqual({ url: number.inbound_url, method: "POST" });

    const res = await fetchWorker(callbackRequest(await dial(s)), ECHO_WORKER);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toContain("<Connect><Stream url=");
    const [run] = await runsOf(s.org.id);
    expect(run).toMatchObject({ direction: "inbound", status: "in_progress", phone_number: CALLING, from_number: CALLER, workflow_id: agentId });

    await prepareScripted(run.id);
    const callee = await connect("cloudonix", run.id);
    await listenUntil(callee, () => callee.played.length >= 1);
    await listen(callee, 300);
    callee.speak(SURE.samples);
    await listenUntil(callee, () => callee.played.length >= 3);
    callee.hangup();
    const hangup = await fetch(`http://sim.test/cloudonix/customers/self/domains/${s.acct.credentials.domain_id}/sessions/${run.provider_call_id}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${s.acct.credentials.bearer_token}` },
    });
    expect(hangup.status).toBe(204);
    for (const ev of await flush(run.provider_call_id)) expect((await deliver(ev)).status).toBe(204);
    const api = (await call("GET", `/api/v1/workflow/${agentId}/runs/${run.id}`, { key: s.org.key })).json;
    expect(api).toMatchObject({ direction: "inbound", status: "completed", phone_number: CALLING });
    const snap = await (await import("../../src/calls/session/stub")).callSessionStub(env, run.id).snapshot();
    expect(snap.turns.slice(0, 2).map((t) => t.text)).toEqual(["Hi Ada!", "Sure, tell me more."]);
  });

  it("a request without the configuration's token is refused and creates nothing", async () => {
    const { s } = await inboundSetup("cloudonix");
    const cb = await dial(s);
    expect((await deliver(cb, { url: cb.url.replace(/[0-9a-f]{64}$/, "0".repeat(64)) })).status).toBe(401);
    expect(await runsOf(s.org.id)).toHaveLength(0);
  });

  it("over the cap: CXML's busy Reject; a number without an agent: the apology and a hang-up; no runs", async () => {
    const { s } = await inboundSetup("cloudonix");
    await organizationStub(env, s.org.id).setCap(1);
    await organizationStub(env, s.org.id).acquire({ leaseId: "held", ttlSeconds: 60 });
    const busy = new VoiceResponse();
    busy.reject({ reason: "busy" });
    expect((await fetchWorker(callbackRequest(await dial(s)), ECHO_WORKER)).text).toBe(busy.toString());
    expect((await attach(s, null)).status).toBe(200);
    expect((await deliver(await dial(s))).text).toMatch(/<Say>Sorry, no one can take your call at this number right now\.[^<]*<\/Say><Hangup\/>/);
    expect(await runsOf(s.org.id)).toHaveLength(0);
  });
});
