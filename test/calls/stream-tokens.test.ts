// The media socket's own token: every stream URL edgedial hands out (answer documents, Exotel's originate, Telnyx's
// dial) carries a fresh one that opens one socket within 15 minutes, and the run's answer/status token opens none.
// Twilio's upgrade must carry a valid X-Twilio-Signature (checked against Twilio's own SDK both ways).
import { env, exports } from "cloudflare:workers";
import twilio from "twilio";
import { afterEach, describe, expect, it } from "vitest";
import { callbackToken } from "../../src/calls/callbacks/callback-urls";
import { callSessionStub } from "../../src/calls/session/stub";
import { streamUrlIn } from "../../src/dev/simulator/media/play";
import { twilioSign } from "../../src/dev/simulator/sign";
import { clock } from "../../src/lib/clock";
import { ECHO_WORKER, echoCall, fetchWorker, mediaUrl, twilioAuthToken, upgrade, upgradeAt } from "./media-support";
import { CALLEE, callbackRequest, play, runRow, setup, simRequests, startCall } from "./support";

const STREAM_TOKEN = /^\d+\.[0-9a-f]{32}\.[0-9a-f]{64}$/;
const live = (req: Request) => fetchWorker(req, ECHO_WORKER);

/** The stream URL the answer document connects (the carrier's answer request delivered as the simulator signed it). */
async function answeredStreamUrl(runId: number): Promise<string> {
  const callId = (await runRow(runId)).providerCallId!;
  const answer = (await play(callId, "answered")).find((c) => c.kind === "answer")!;
  const res = await live(callbackRequest(answer));
  expect(res.status, res.text).toBe(200);
  return streamUrlIn(res.text)!;
}

const http = (url: string) => url.replace(/^ws/, "http");
const tokenOf = (url: string) => new URL(url).pathname.split("/").pop()!;
const detail = async (res: Response) => ((await res.json()) as { detail: string }).detail;

/** The upgrade opened the stream (101); its socket is closed again. */
function expectOpened(res: Response) {
  expect(res.status).toBe(101);
  res.webSocket!.accept();
  res.webSocket!.close(1000);
}

afterEach(() => clock.set(null));

describe("stream URLs: a token of their own, short-lived and single-use", () => {
  it.each(["twilio", "plivo", "vobiz", "vonage", "cloudonix"] as const)(
    "%s: the answer document's stream opens once; its replay is refused",
    async (provider) => {
      const { runId } = await echoCall(provider);
      const url = await answeredStreamUrl(runId);
      expect(tokenOf(url)).toMatch(STREAM_TOKEN);
      // A second answer (the carrier's retry) gets another URL: each is minted afresh.
      expect(await answeredStreamUrl(runId)).not.toBe(url);
      const first = await upgradeAt(provider, runId, http(url));
      expect(first.status).toBe(101);
      first.webSocket!.accept();
      const replay = await upgradeAt(provider, runId, http(url));
      expect(replay.status).toBe(403);
      expect(await detail(replay)).toBe("This stream URL was already used");
      first.webSocket!.close(1000);
    },
  );

  it("Exotel's stream URL (in the originate request) and Telnyx's stream_url (on dial) each open once", async () => {
    for (const provider of ["exotel", "telnyx"] as const) {
      const s = await setup(provider);
      const started = await live(
        new Request(`http://edgedial.test/api/v1/public/agent/${s.agent.workflow_uuid}`, {
          method: "POST",
          headers: { "X-API-Key": s.org.key, "Content-Type": "application/json" },
          body: JSON.stringify({ phone_number: CALLEE, initial_context: { first_name: "Ada" } }),
        }),
      );
      expect(started.status, started.text).toBe(200);
      const runId = JSON.parse(started.text).workflow_run_id as number;
      await callSessionStub(env, runId).prepare({ agent: "echo" });
      const dial = (await simRequests(s.acct)).find((r) => r.method === "POST" && /connect\.json$|\/v2\/calls$/.test(r.path))!;
      const url = provider === "exotel" ? new URLSearchParams(dial.body).get("streamurl")! : JSON.parse(dial.body).stream_url;
      expect(tokenOf(url), provider).toMatch(STREAM_TOKEN);
      const first = await upgradeAt(provider, runId, http(url));
      expect(first.status, provider).toBe(101);
      first.webSocket!.accept();
      expect((await upgradeAt(provider, runId, http(url))).status, provider).toBe(403);
      first.webSocket!.close(1000);
    }
  });

  it("the run's answer/status token opens no stream, nor does a stream token of another run or carrier", async () => {
    const s = await setup("plivo");
    const runId = await startCall(s);
    const other = await startCall(s);
    const refusedWith = async (token: string) => {
      const res = await upgrade("plivo", runId, token);
      return [res.status, await detail(res)];
    };
    expect(await refusedWith(await callbackToken(env.CALLBACK_SECRET, "plivo", runId))).toEqual([401, "Invalid stream token"]);
    expect(await refusedWith(tokenOf(await mediaUrl("plivo", other)))).toEqual([401, "Invalid stream token"]);
    expect(await refusedWith(tokenOf(await mediaUrl("vobiz", runId)))).toEqual([401, "Invalid stream token"]);
    // A changed expiry breaks the MAC.
    const [exp, nonce, mac] = tokenOf(await mediaUrl("plivo", runId)).split(".");
    expect(await refusedWith(`${Number(exp) + 3600}.${nonce}.${mac}`)).toEqual([401, "Invalid stream token"]);
    // And the stream token opens no answer or status callback.
    const stream = tokenOf(await mediaUrl("plivo", runId));
    const status = await exports.default.fetch(new Request(`http://edgedial.test/api/v1/telephony/plivo/status/${runId}/${stream}`, { method: "POST" }));
    expect(status.status).toBe(401);
  });

  // The documented lifetime (docs/live-calls.md: "valid 15 minutes"), written as the number, not the constant: a
  // lifetime raised in src/ must fail here.
  it("expires 15 minutes after it was minted", async () => {
    const FIFTEEN_MINUTES_MS = 15 * 60 * 1000;
    const { runId } = await echoCall("vonage");
    const t0 = Date.now();
    clock.set(t0);
    const late = await mediaUrl("vonage", runId);
    const inTime = await mediaUrl("vonage", runId);
    clock.set(t0 + FIFTEEN_MINUTES_MS);
    const res = await upgradeAt("vonage", runId, late);
    expect([res.status, await detail(res)]).toEqual([401, "This stream URL has expired"]);
    clock.set(t0 + FIFTEEN_MINUTES_MS - 1000);
    expectOpened(await upgradeAt("vonage", runId, inTime));
  });

  it("another fresh token for the same run reaches the call session, which decides (a call coming back after a reset)", async () => {
    const { runId } = await echoCall("plivo");
    const first = await upgrade("plivo", runId);
    expect(first.status).toBe(101);
    first.webSocket!.accept();
    // Not the route's refusal (401/403): the session takes it over or says why not.
    const second = await upgrade("plivo", runId);
    expect([101, 409]).toContain(second.status);
    if (second.status === 409) expect(await detail(second)).toMatch(/media stream/);
    first.webSocket!.close(1000);
  });

  it("a token whose upgrade the session refused is given back, not spent", async () => {
    // Exotel with the greeting agent and nothing to say: the session ends the call by closing its socket, and the
    // run stays open until Exotel's status callback, so a later upgrade reaches the session, which refuses it.
    const s = await setup("exotel");
    const runId = await startCall(s);
    const firstUrl = await mediaUrl("exotel", runId);
    const first = await upgradeAt("exotel", runId, firstUrl);
    expect(first.status).toBe(101);
    const ws = first.webSocket!;
    ws.accept();
    const closed = new Promise((r) => ws.addEventListener("close", r));
    ws.send(JSON.stringify({ event: "connected" }));
    ws.send(JSON.stringify({ event: "start", start: { call_sid: (await runRow(runId)).providerCallId } }));
    await closed;
    const url = await mediaUrl("exotel", runId);
    const refused = await upgradeAt("exotel", runId, url);
    // The session that ended the call made its run final, so the route refuses it before the session is asked.
    expect([refused.status, await detail(refused)]).toEqual([409, "This call has ended"]);
    const spent = (u: string) =>
      env.DB.prepare("SELECT count(*) AS n FROM callback_nonces WHERE scheme = 'stream' AND nonce = ?").bind(tokenOf(u).split(".")[1]).first("n");
    expect(await spent(firstUrl)).toBe(1);
    expect(await spent(url)).toBe(0);
    expect((await upgradeAt("exotel", runId, url)).status).toBe(409);
  });
});

describe("Twilio's signed media upgrade", () => {
  it("refuses an unsigned or forged upgrade with 403 before the session, without spending the token", async () => {
    const { runId } = await echoCall("twilio");
    const url = await mediaUrl("twilio", runId);
    const unsigned = await upgradeAt("twilio", runId, url, { Upgrade: "websocket" }, false);
    expect([unsigned.status, await detail(unsigned)]).toEqual([403, "Invalid signature"]);
    const authToken = await twilioAuthToken(runId);
    const forgeries = [
      twilio.getExpectedTwilioSignature("not-the-auth-token", url.replace(/^http/, "ws"), {}),
      // Signed for another stream URL of the same run.
      twilio.getExpectedTwilioSignature(authToken, (await mediaUrl("twilio", runId)).replace(/^http/, "ws"), {}),
    ];
    for (const sig of forgeries) {
      const res = await exports.default.fetch(new Request(url, { headers: { Upgrade: "websocket", "X-Twilio-Signature": sig } }));
      expect(res.status).toBe(403);
    }
    expect(await callSessionStub(env, runId).snapshot()).toMatchObject({ ended: false });
    // The same URL, signed as Twilio signs it (the wss:// URL), opens: the refusals spent nothing.
    expectOpened(await upgradeAt("twilio", runId, url));
  });

  it("the simulator signs the upgrade as Twilio does: Twilio's SDK validates its signature over the wss:// URL", async () => {
    const s = await setup("twilio");
    const runId = await startCall(s);
    const url = (await mediaUrl("twilio", runId)).replace(/^http/, "wss").replace("wss://edgedial.test", "wss://dial.example.com");
    const authToken = s.acct.credentials.auth_token;
    const sig = await twilioSign(authToken, url, []);
    expect(twilio.validateRequest(authToken, sig, url, {})).toBe(true);
    expect(twilio.validateRequest(authToken, sig, url.replace(/^wss/, "https"), {})).toBe(false);
  });

  it("a signature over the https:// form of the stream URL is accepted too (a proxy or a compatible carrier)", async () => {
    const { runId } = await echoCall("twilio");
    const url = await mediaUrl("twilio", runId);
    const sig = twilio.getExpectedTwilioSignature(await twilioAuthToken(runId), url, {});
    expectOpened(await exports.default.fetch(new Request(url, { headers: { Upgrade: "websocket", "X-Twilio-Signature": sig } })));
  });

  it("Cloudonix (Twilio's stream protocol, no documented signature) opens unsigned", async () => {
    const { runId } = await echoCall("cloudonix");
    expectOpened(await upgrade("cloudonix", runId));
  });
});
