// Calls that come in, on Twilio through the carrier simulator: attaching an agent to a number points the number's
// VoiceUrl at the configuration's inbound URL; a caller dialing it (Twilio's signed voice request) gets the media
// document, talks with the agent (greeting, a reply to their words) and the run ends completed with direction
// inbound; forged and unsigned requests create nothing; over the cap the caller hears busy; a number without an
// agent gets a spoken apology and a hang-up.
import { env } from "cloudflare:workers";
import twilio from "twilio";
import VoiceResponse from "twilio/lib/twiml/VoiceResponse";
import { describe, expect, it } from "vitest";
import { organizationStub } from "../../src/organizations/organization-object";
import type { Callback } from "../../src/dev/simulator/types";
import { call } from "../helpers";
import { listen, listenUntil, prepareScripted, SURE } from "./conversation-support";
import { connect, ECHO_WORKER, fetchWorker } from "./media-support";
import { CALLER, callbackRequest, deliver, flush, setup, sim, simRequests } from "./support";
import { attach, CALLING, dial, inboundSetup, runsOf } from "./inbound-support";

const inboundSetupHere = () => inboundSetup("twilio", (s) => sim("POST", `/accounts/${s.acct.id}/numbers`, { number: CALLER }));

/** The Worker's answer to the carrier's request, with a voice agent on the media path. */
const answer = (cb: Callback, headers: Record<string, string | null> = {}) => {
  const req = callbackRequest(cb);
  for (const [k, v] of Object.entries(headers)) v === null ? req.headers.delete(k) : req.headers.set(k, v);
  return fetchWorker(req, ECHO_WORKER);
};

describe("inbound calls (Twilio)", () => {
  it("attaching points the number's VoiceUrl (and StatusCallback) at the inbound URL, as Twilio's REST API documents", async () => {
    const { s, number } = await inboundSetupHere();
    expect(number.inbound_url).toMatch(new RegExp(`/api/v1/telephony/twilio/inbound/${s.configId}/[0-9a-f]{64}$`));
    const reqs = (await simRequests(s.acct)).filter((r) => r.path.includes("IncomingPhoneNumbers"));
    expect(reqs[0]).toMatchObject({ method: "GET", query: { PhoneNumber: [CALLER] } });
    expect(reqs[1].method).toBe("POST");
    expect(reqs[1].path).toMatch(/\/IncomingPhoneNumbers\/PN[0-9a-f]{32}\.json$/);
    expect(Object.fromEntries(new URLSearchParams(reqs[1].body))).toEqual({
      VoiceUrl: number.inbound_url,
      VoiceMethod: "POST",
      StatusCallback: number.inbound_url,
      StatusCallbackMethod: "POST",
    });
    const nums = await sim<any[]>("GET", `/accounts/${s.acct.id}/numbers`);
    expect(nums[0].voice_url).toBe(number.inbound_url);
  });

  it("the lookup and the update are the requests twilio's own client sends (incomingPhoneNumbers list and update)", async () => {
    const { s, number } = await inboundSetupHere();
    const seen: { method: string; uri: string; params?: Record<string, unknown>; data?: Record<string, unknown> }[] = [];
    const httpClient = {
      request: async (o: (typeof seen)[number]) => (seen.push(o), { statusCode: 200, body: { incoming_phone_numbers: [], sid: "PN1" }, headers: {} }),
    };
    const client = twilio(s.acct.credentials.account_sid, s.acct.credentials.auth_token, { httpClient } as never);
    await client.incomingPhoneNumbers.list({ phoneNumber: CALLER, limit: 1 });
    const ours = (await simRequests(s.acct)).filter((r) => r.path.includes("IncomingPhoneNumbers"));
    const sid = /\/(PN[0-9a-f]{32})\.json$/.exec(ours[1].path)![1];
    await client
      .incomingPhoneNumbers(sid)
      .update({ voiceUrl: number.inbound_url, voiceMethod: "POST", statusCallback: number.inbound_url, statusCallbackMethod: "POST" });
    expect(new URL(seen[0].uri).pathname).toBe(ours[0].path);
    expect(seen[0].params?.PhoneNumber).toBe(ours[0].query.PhoneNumber[0]);
    expect(seen[1].method.toUpperCase()).toBe("POST");
    expect(new URL(seen[1].uri).pathname).toBe(ours[1].path);
    expect(Object.fromEntries(new URLSearchParams(ours[1].body))).toEqual(seen[1].data);
    // The busy refusal is the TwiML twilio's VoiceResponse writes for <Reject reason="busy"/>.
    const busy = new VoiceResponse();
    busy.reject({ reason: "busy" });
    expect((await import("../../src/telephony/providers/twilio/inbound")).REJECT_BUSY).toBe(busy.toString());
  });

  it("a caller reaches the agent: greeting, a reply to their words, the run completed with direction inbound", async () => {
    const { s, agentId } = await inboundSetupHere();
    const cb = await dial(s);
    const res = await answer(cb);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toContain("<Connect><Stream url=");
    const [run] = await runsOf(s.org.id);
    expect(run).toMatchObject({ direction: "inbound", status: "in_progress", phone_number: CALLING, from_number: CALLER, workflow_id: agentId });
    expect(JSON.parse(run.initial_context)).toEqual({ first_name: "Ada", caller_number: CALLING, called_number: CALLER });

    // The same voice request again (Twilio retrying it) answers the same call, not a second run.
    expect((await answer(cb)).text).toContain("<Connect><Stream url=");
    expect(await runsOf(s.org.id)).toHaveLength(1);

    await prepareScripted(run.id);
    const callee = await connect("twilio", run.id);
    await listenUntil(callee, () => callee.played.length >= 1);
    await listen(callee, 300);
    callee.speak(SURE.samples);
    await listenUntil(callee, () => callee.played.length >= 3);
    // The caller hangs up (their stream stops; the simulator ends the call as Twilio would), and Twilio's status
    // callback, to the number's StatusCallback, ends the run.
    callee.hangup();
    const hangup = await fetch(`http://sim.test/twilio/2010-04-01/Accounts/${s.acct.credentials.account_sid}/Calls/${run.provider_call_id}.json`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${btoa(`${s.acct.credentials.account_sid}:${s.acct.credentials.auth_token}`)}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "Status=completed",
    });
    expect(hangup.status).toBe(200);
    for (const status of await flush(run.provider_call_id)) expect((await deliver(status)).status).toBe(204);
    const api = (await call("GET", `/api/v1/workflow/${agentId}/runs/${run.id}`, { key: s.org.key })).json;
    expect(api).toMatchObject({ direction: "inbound", status: "completed", phone_number: CALLING });
    const snap = await (await import("../../src/calls/session/stub")).callSessionStub(env, run.id).snapshot();
    expect(snap.turns.slice(0, 3).map((t) => [t.role, t.text])).toEqual([
      ["agent", "Hi Ada!"],
      ["callee", "Sure, tell me more."],
      ["agent", "Great. How many seats do you need?"],
    ]);
    // Listed and filtered by direction.
    const inbound = await call("GET", `/api/v1/workflow/${agentId}/runs?direction=inbound`, { key: s.org.key });
    expect(inbound.json.items.map((r: any) => r.id)).toEqual([run.id]);
    expect((await call("GET", `/api/v1/workflow/${agentId}/runs?direction=outbound`, { key: s.org.key })).json.items).toEqual([]);
    expect((await call("GET", `/api/v1/workflow/${agentId}/runs?direction=sideways`, { key: s.org.key })).status).toBe(422);
  });

  it.each([
    ["forged (another body under the signature)", { body: "tampered" }, 403],
    ["unsigned", { headers: { "X-Twilio-Signature": null } }, 403],
    ["signed by another account", { headers: { "X-Twilio-Signature": "AAAAAAAAAAAAAAAAAAAAAAAAAAA=" } }, 403],
    ["a wrong token in the URL", { token: "0".repeat(64) }, 401],
  ] as const)("a %s request is refused and creates nothing", async (_what, tweak: any, status) => {
    const { s } = await inboundSetupHere();
    const cb = await dial(s);
    const url = tweak.token ? cb.url.replace(/[0-9a-f]{64}$/, tweak.token) : cb.url;
    const body = tweak.body === "tampered" ? cb.body.replace("ringing", "in-progress") : cb.body;
    const res = await deliver({ ...cb, body }, { url, headers: tweak.headers ?? {} });
    expect(res.status, res.text).toBe(status);
    expect(await runsOf(s.org.id)).toHaveLength(0);
  });

  it("over the organization's concurrent-call cap the caller hears busy (TwiML Reject), and no run is made", async () => {
    const { s } = await inboundSetupHere();
    await organizationStub(env, s.org.id).setCap(1);
    await organizationStub(env, s.org.id).acquire({ leaseId: "held", ttlSeconds: 60 });
    const res = await answer(await dial(s));
    expect(res.status).toBe(200);
    expect(res.text).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Reject reason="busy"/></Response>');
    expect(await runsOf(s.org.id)).toHaveLength(0);
  });

  it.each(["detached", "archived"])("a number whose agent is %s: a polite message and a hang-up, no run", async (how) => {
    const { s, agentId } = await inboundSetupHere();
    if (how === "detached") expect((await attach(s, null)).json.inbound_workflow_id).toBeNull();
    else expect((await call("PUT", `/api/v1/workflow/${agentId}/status`, { key: s.org.key, body: { status: "archived" } })).status).toBe(200);
    const res = await answer(await dial(s));
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/^<\?xml[^>]*><Response><Say>Sorry, no one can take your call at this number right now\.[^<]*<\/Say><Hangup\/><\/Response>$/);
    expect(await runsOf(s.org.id)).toHaveLength(0);
  });

  it("attaching checks the agent: another organization's is 404, an archived one 422; the carrier's refusal is 502 and saves nothing", async () => {
    const { s, agentId } = await inboundSetupHere();
    const other = await setup("twilio");
    const foreign = await attach(s, other.agent.id);
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual({ detail: "Workflow not found" });
    await call("PUT", `/api/v1/workflow/${agentId}/status`, { key: s.org.key, body: { status: "archived" } });
    const archived = await attach(s, agentId);
    expect(archived.status).toBe(422);
    expect(archived.json.detail[0]).toMatchObject({ loc: ["body", "inbound_workflow_id"], type: "value_error" });
    // A number the Twilio account does not own cannot be routed.
    const add = await call("POST", `/api/v1/organizations/telephony-configs/${s.configId}/phone-numbers`, {
      key: s.org.key,
      body: { address: "+14155550199", inbound_workflow_id: s.agent.id },
    });
    expect(add.status).toBe(502);
    expect(add.json.detail).toContain("+14155550199 is not a phone number of this account");
    const list = await call("GET", `/api/v1/organizations/telephony-configs/${s.configId}/phone-numbers`, { key: s.org.key });
    expect(list.json.items.map((n: any) => n.address)).toEqual([CALLER]);
  });
});
