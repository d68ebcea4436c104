// Calls that come in on Telnyx (Call Control v2, command-driven): attaching points the Call Control application's
// webhook_event_url at the inbound URL (the request the telnyx SDK sends); a caller's signed call.initiated is
// answered by the answer command with the stream settings of a dialed call and its events sent to the run; the caller
// talks with the agent and the run completes inbound; forged, stale, unsigned and replayed events create nothing;
// over the cap the call is rejected USER_BUSY; a number without an agent is answered, hears the apology, is hung up.
import { env } from "cloudflare:workers";
import Telnyx from "telnyx";
import { describe, expect, it } from "vitest";
import { organizationStub } from "../../src/organizations/organization-object";
import { call } from "../helpers";
import { listen, listenUntil, prepareScripted, SURE } from "./conversation-support";
import { connect, ECHO_WORKER, fetchWorker } from "./media-support";
import { CALLER, callbackRequest, deliver, flush, type Setup, sim, simRequests } from "./support";
import { attach, CALLING, dial, inboundSetup, runsOf } from "./inbound-support";

const commands = async (s: Setup, action: string) =>
  (await simRequests(s.acct)).filter((r) => r.path.endsWith(`/actions/${action}`)).map((r) => ({ path: r.path, body: JSON.parse(r.body) }));

/** The path and body the telnyx SDK sends for a request (nothing leaves the test: its fetch is ours). */
async function sdkSends(run: (client: Telnyx) => Promise<unknown>) {
  let sent: { method: string; path: string; body: unknown } | null = null;
  const client = new Telnyx({
    apiKey: "KEY-test",
    baseURL: "https://api.telnyx.test/v2",
    maxRetries: 0,
    fetch: (async (url: string | URL | Request, init?: RequestInit) => {
      sent = { method: String(init?.method), path: new URL(String(url)).pathname, body: init?.body ? JSON.parse(String(init.body)) : null };
      return new Response(JSON.stringify({ data: { result: "ok" } }), { headers: { "Content-Type": "application/json" } });
    }) as typeof fetch,
  });
  await run(client);
  return sent!;
}

describe("inbound calls (Telnyx)", () => {
  it("attaching updates the Call Control application's webhook_event_url, as the telnyx SDK's update sends it", async () => {
    const { s, number } = await inboundSetup("telnyx");
    expect(number.inbound_url).toMatch(new RegExp(`/api/v1/telephony/telnyx/inbound/${s.configId}/[0-9a-f]{64}$`));
    const patch = (await simRequests(s.acct)).find((r) => r.method === "PATCH")!;
    const [app] = await sim<{ id: string; name: string; url: string }[]>("GET", `/accounts/${s.acct.id}/applications`);
    expect(patch.path).toBe(`/v2/call_control_applications/${app.id}`);
    expect(app.url).toBe(number.inbound_url);
    const sdk = await sdkSends((c) => c.callControlApplications.update(app.id, { application_name: app.name, webhook_event_url: number.inbound_url }));
    expect({ method: patch.method, path: patch.path, body: JSON.parse(patch.body) }).toEqual(sdk);
  });

  it("a caller reaches the agent: answer with the stream, greeting, a reply, the run completed inbound", async () => {
    const { s, agentId } = await inboundSetup("telnyx");
    const cb = await dial(s);
    const res = await fetchWorker(callbackRequest(cb), ECHO_WORKER);
    expect(res.status, res.text).toBe(204);
    const [run] = await runsOf(s.org.id);
    expect(run).toMatchObject({ direction: "inbound", status: "ringing", phone_number: CALLING, from_number: CALLER, workflow_id: agentId });
    expect(JSON.parse(run.initial_context)).toEqual({ first_name: "Ada", caller_number: CALLING, called_number: CALLER });
    const [answer] = await commands(s, "answer");
    expect(answer.body).toMatchObject({
      webhook_url: expect.stringMatching(new RegExp(`/api/v1/telephony/telnyx/status/${run.id}/[0-9a-f]{64}$`)),
      webhook_url_method: "POST",
      stream_url: expect.stringMatching(new RegExp(`^ws.*/api/v1/telephony/telnyx/stream/${run.id}/`)),
      stream_track: "inbound_track",
      stream_bidirectional_mode: "rtp",
      stream_bidirectional_codec: "PCMU",
    });
    const sdk = await sdkSends((c) => c.calls.actions.answer(run.provider_call_id, answer.body));
    expect({ path: answer.path, body: answer.body }).toEqual({ path: sdk.path, body: sdk.body });

    // A redelivered call.initiated makes no second run (the same command_id: Telnyx ignores the repeat).
    // call.answered goes to the run's status URL and puts it in progress.
    for (const ev of await flush(run.provider_call_id)) expect((await fetchWorker(callbackRequest(ev), ECHO_WORKER)).status).toBeLessThan(300);
    expect((await runsOf(s.org.id))[0].status).toBe("in_progress");

    await prepareScripted(run.id);
    const callee = await connect("telnyx", run.id);
    await listenUntil(callee, () => callee.played.length >= 1);
    await listen(callee, 300);
    callee.speak(SURE.samples);
    await listenUntil(callee, () => callee.played.length >= 3);
    callee.hangup();
    const hangup = await fetch(`http://sim.test/telnyx/v2/calls/${run.provider_call_id}/actions/hangup`, {
      method: "POST",
      headers: { Authorization: `Bearer ${s.acct.credentials.api_key}`, "Content-Type": "application/json" },
      body: "{}",
    });
    expect(hangup.status).toBe(200);
    for (const ev of await flush(run.provider_call_id)) expect((await deliver(ev)).status).toBeLessThan(300);
    const api = (await call("GET", `/api/v1/workflow/${agentId}/runs/${run.id}`, { key: s.org.key })).json;
    expect(api).toMatchObject({ direction: "inbound", status: "completed", phone_number: CALLING });
    const snap = await (await import("../../src/calls/session/stub")).callSessionStub(env, run.id).snapshot();
    expect(snap.turns.slice(0, 3).map((t) => [t.role, t.text])).toEqual([
      ["agent", "Hi Ada!"],
      ["callee", "Sure, tell me more."],
      ["agent", "Great. How many seats do you need?"],
    ]);
  });

  it("forged, unsigned, stale and replayed events are refused and create nothing", async () => {
    const { s } = await inboundSetup("telnyx");
    const cb = await dial(s);
    expect((await deliver(cb, { body: cb.body.replace(CALLING, "+14155550178") })).status).toBe(403);
    expect((await deliver(cb, { headers: { "telnyx-signature-ed25519": null } })).status).toBe(403);
    expect((await deliver(cb, { url: cb.url.replace(/[0-9a-f]{64}$/, "0".repeat(64)) })).status).toBe(401);
    expect((await deliver(await dial(s, { stale: true }))).status).toBe(403);
    expect(await runsOf(s.org.id)).toHaveLength(0);
    expect((await fetchWorker(callbackRequest(cb), ECHO_WORKER)).status).toBe(204);
    expect((await deliver(cb)).status).toBe(403); // the same signed delivery again
    expect(await runsOf(s.org.id)).toHaveLength(1);
  });

  it("over the cap the call is rejected with cause USER_BUSY (never answered), as the SDK sends reject", async () => {
    const { s } = await inboundSetup("telnyx");
    await organizationStub(env, s.org.id).setCap(1);
    await organizationStub(env, s.org.id).acquire({ leaseId: "held", ttlSeconds: 60 });
    const cb = await dial(s);
    expect((await fetchWorker(callbackRequest(cb), ECHO_WORKER)).status).toBe(204);
    expect(await runsOf(s.org.id)).toHaveLength(0);
    expect(await commands(s, "answer")).toEqual([]);
    const [reject] = await commands(s, "reject");
    const id = JSON.parse(cb.body).data.payload.call_control_id;
    const sdk = await sdkSends((c) => c.calls.actions.reject(id, { cause: "USER_BUSY", command_id: "inbound-busy" }));
    expect(reject).toEqual({ path: sdk.path, body: sdk.body });
    // Its call.hangup (user_busy), at the application's URL, is about no run of ours.
    for (const ev of await flush(id)) expect((await deliver(ev)).status).toBe(204);
    expect(await runsOf(s.org.id)).toHaveLength(0);
  });

  it("a number without an agent: answered, the apology spoken, then hung up; no run", async () => {
    const { s } = await inboundSetup("telnyx");
    expect((await attach(s, null)).status).toBe(200);
    const cb = await dial(s);
    expect((await deliver(cb)).status).toBe(204);
    const id = JSON.parse(cb.body).data.payload.call_control_id;
    // call.answered → speak; call.speak.ended → hangup; call.hangup: nothing more.
    for (let i = 0; i < 3; i++) for (const ev of await flush(id)) expect((await deliver(ev)).status).toBe(204);
    const [speak] = await commands(s, "speak");
    expect(speak.body).toMatchObject({ payload: expect.stringMatching(/^Sorry, no one can take your call at this number right now\./), voice: "female" });
    expect(await commands(s, "hangup")).toHaveLength(1);
    expect(await runsOf(s.org.id)).toHaveLength(0);
  });
});
