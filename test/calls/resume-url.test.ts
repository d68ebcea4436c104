// The resume URL: proven like the answer callback (the per-run token, the carrier's signature, a once-only nonce, an
// unsigned body naming the run's call), answering a new stream only while the call session can take the call back,
// a document that hangs up otherwise, and nothing at all to a Vonage leg event that is not a disconnection.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { vonageCallbackJwt } from "../../src/dev/simulator/sign";
import { streamUrlIn } from "../../src/dev/simulator/media/play";
import { resumeUrl } from "../../src/calls/resume/resume";
import { getProvider } from "../../src/telephony/providers/registry";
import { answeredLiveCall, answerLive, deliverLive, liveFetch, mediaEnded } from "./resume-support";
import { runRow, setup, startCall } from "./support";
import { parseXml } from "./xml";

/** The simulator's request for what follows the stream once its socket closed (the call's Redirect, Vonage's event). */
async function resumeRequest(callId: string, document: string) {
  const cbs = await mediaEnded(callId, document);
  expect(cbs.map((c) => c.kind)).toEqual(["answer"]);
  expect(cbs[0].url).toMatch(/\/api\/v1\/telephony\/[a-z]+\/resume\/\d+\/[0-9a-f]{64}$/);
  return cbs[0];
}

const send = (cb: { url: string; method: string; headers: Record<string, string>; body: string }, tweak: { url?: string; body?: string } = {}) =>
  liveFetch(new Request(tweak.url ?? cb.url, { method: cb.method, headers: cb.headers, body: tweak.body ?? cb.body }));

describe("a call that cannot be taken back gets the carrier's hang-up document", () => {
  it.each(["twilio", "cloudonix", "plivo", "vobiz", "vonage"] as const)("%s: its stream never connected", async (provider) => {
    const s = await setup(provider);
    const { callId, document } = await answerLive(s, provider);
    const r = await deliverLive(await resumeRequest(callId, document));
    const hangup = getProvider(provider).calls!.answerDocument("");
    expect(r.contentType).toBe(hangup.contentType);
    expect(r.text).toBe(hangup.body);
    expect(streamUrlIn(r.text)).toBeNull();
  });

  it("twilio: the call ended (the callee hung up), then its socket closed", async () => {
    const s = await setup("twilio");
    const { callId, document, callee } = await answeredLiveCall(s, "twilio");
    callee.hangup();
    await callee.until(() => callee.closed !== null);
    const r = await deliverLive(await resumeRequest(callId, document));
    expect(parseXml(r.text)).toEqual(parseXml('<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>'));
  });
});

describe("the resume URL proves itself as the answer URL does", () => {
  it("twilio: a wrong token is 401, a tampered signature 403", async () => {
    const s = await setup("twilio");
    const { callId, document } = await answerLive(s, "twilio");
    const cb = await resumeRequest(callId, document);
    expect((await send(cb, { url: cb.url.replace(/[0-9a-f]{64}$/, "0".repeat(64)) })).status).toBe(401);
    expect((await send(cb, { body: cb.body.replace("in-progress", "completed") })).status).toBe(403);
    expect((await send(cb)).status).toBe(200);
  });

  it("plivo: the same signed request twice is a replay (403); the first was answered", async () => {
    const s = await setup("plivo");
    const { callId, document } = await answerLive(s, "plivo");
    const cb = await resumeRequest(callId, document);
    expect((await send(cb)).status).toBe(200);
    expect((await send(cb)).status).toBe(403);
  });

  it("cloudonix (unsigned): a body naming another call is refused", async () => {
    const s = await setup("cloudonix");
    const { callId, document } = await answerLive(s, "cloudonix");
    const cb = await resumeRequest(callId, document);
    const other = JSON.stringify({ ...JSON.parse(cb.body), Session: "another-session" });
    expect(await send(cb, { body: other })).toMatchObject({ status: 403 });
    expect((await send(cb)).status).toBe(200);
  });

  it("a carrier with no media document (telnyx) has no resume URL: 404 once the token checked out", async () => {
    const s = await setup("telnyx");
    const runId = await startCall(s);
    const url = await resumeUrl(env.CALLBACK_SECRET, "http://edgedial.test", "telnyx", runId);
    expect((await liveFetch(new Request(url, { method: "POST", body: "{}" }))).status).toBe(404);
    expect((await liveFetch(new Request(url.replace(/[0-9a-f]{64}$/, "0".repeat(64)), { method: "POST", body: "{}" }))).status).toBe(401);
  });
});

describe("vonage: the connect action's other leg events", () => {
  it.each(["started", "answered", "completed"])("%s: answered with nothing (the running NCCO goes on); the run's status is untouched", async (status) => {
    const s = await setup("vonage");
    const { runId, callId, document } = await answerLive(s, "vonage");
    const cb = await resumeRequest(callId, document);
    const body = JSON.stringify({ ...JSON.parse(cb.body), status });
    const jwt = await vonageCallbackJwt(
      s.acct.credentials.signature_secret,
      {
        iat: Math.floor(Date.now() / 1000),
        jti: crypto.randomUUID(),
        iss: "Vonage",
        api_key: s.acct.credentials.api_key,
        application_id: s.acct.credentials.application_id,
      },
      body,
    );
    const r = await liveFetch(new Request(cb.url, { method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${jwt}` }, body }));
    expect(r).toMatchObject({ status: 204, text: "" });
    expect((await runRow(runId)).status).toBe("in_progress");
  });
});
