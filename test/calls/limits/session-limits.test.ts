// Deploy fidelity: a call session's outbound connections and subrequests under Workers' limits, which the local
// runtime does not enforce (test/calls/limits/workers-limits.ts enforces them here). Real conversations, held in real
// time, with the agent's engines on HTTP (the stand-ins for an OpenAI-compatible model, Deepgram and ElevenLabs):
// the session's figures are checked against what the stand-ins served, must stay within the limits, and are
// printed ("session peak: ...") for the closing note.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callSessionStub } from "../../../src/calls/session/stub";
import { sessionStart } from "../../../src/calls/start/session-start";
import type { CalleeStream } from "../../../src/dev/simulator/media/callee";
import { getDb } from "../../../src/lib/db";
import { mediaIds, startAriMedia } from "../../../src/telephony/providers/ari/media";
import { providerEnvOf } from "../../../src/telephony/provisioning";
import { loadConfigContext } from "../../../src/telephony/resolve";
import { getConfig } from "../../../src/telephony/store";
import { SEATS, SURE } from "../conversation-support";
import { connect } from "../media-support";
import { runRow, SIM, setup } from "../support";
import { asteriskMedia, inSession, onLine, repliedThenQuiet, standinCall, standinLog, type Engines } from "./live-call";
import { installLimits, type Ledger, ledgerOf, routeLocally, WORKERS_LIMITS } from "./workers-limits";

installLimits();

const key = (behaviour = "ok") => `${behaviour}-${crypto.randomUUID()}`;
const ledgerFor = (runId: number) => ledgerOf(callSessionStub(env, runId).id.toString());

/** A Twilio call of the seats agent on the stand-ins of the OpenAI-compatible model and Deepgram (one key for all). */
async function deepgramCall() {
  const s = await setup("twilio");
  const k = key();
  const e: Engines = { llmKey: k, stt: "deepgram", sttKey: k, tts: "deepgram", ttsKey: k };
  const runId = await standinCall(s, e);
  return { s, e, runId, ledger: ledgerFor(runId) };
}

/** The session's last write (the recording and transcript on the run) is done before it closes the socket. */
async function finished(runId: number) {
  expect((await callSessionStub(env, runId).snapshot()).ended).toBe(true);
  expect((await runRow(runId)).recordingKey).toBeTruthy();
}

/** What the stand-ins served the call: model requests, spoken sentences and live transcription sockets. */
async function served(e: Engines) {
  const chats = (await standinLog(`chat:${e.llmKey}`)).length;
  const speech = [...(await standinLog(e.ttsKey)), ...(e.sttKey === e.ttsKey ? [] : await standinLog(e.sttKey))];
  return {
    chats,
    spoken: speech.filter((r) => r.path === "/v1/speak" || r.path.startsWith("/v1/text-to-speech/")).length,
    sockets: speech.filter((r) => r.path === "/v1/listen" && r.method === "GET").length,
  };
}

/** The figures within the limits, nothing held back, and the line the closing note quotes. */
function withinLimits(ledger: Ledger, audioMs: number, scenario: string) {
  console.log(`${scenario}: ${ledger.summary(audioMs / 1000)}`);
  expect(ledger.queued).toEqual([]);
  expect(ledger.peakWaiting).toBeGreaterThanOrEqual(1);
  expect(ledger.peakWaiting).toBeLessThanOrEqual(WORKERS_LIMITS.connections);
  expect(ledger.subrequests).toBeLessThan(WORKERS_LIMITS.subrequests);
}

/** The greeting, the callee's turns (each answered), then silence until the agent says goodbye and hangs up. */
async function conversation(callee: CalleeStream, turns: Int16Array[], drive = (fn: () => Promise<number>) => fn()) {
  let audioMs = await drive(() => onLine(callee, null, repliedThenQuiet(callee)));
  for (const speech of turns) audioMs += await drive(() => onLine(callee, speech, repliedThenQuiet(callee)));
  audioMs += await drive(() => onLine(callee, null, () => false, 20_000));
  expect(callee.closed, "the agent ended the call").not.toBeNull();
  return audioMs;
}

describe("a call session's outbound connections and subrequests, under Workers' limits", () => {
  it("Twilio; an OpenAI-compatible model, Deepgram live transcription and streamed Deepgram speech: every request counted, within the limits", async () => {
    const { s, e, runId, ledger } = await deepgramCall();
    const audioMs = await conversation(await connect("twilio", runId), [SURE.samples, SEATS.samples, SURE.samples]);
    await finished(runId);

    // Each request the stand-ins served, one transcription socket per callee turn, and the carrier's hang-up request.
    const got = await served(e);
    expect(got.sockets).toBe(3);
    expect(ledger.byKind.websocket).toBe(got.sockets);
    const callSid = (await runRow(runId)).providerCallId!;
    const hangups = ledger.requests.filter((u) => u.includes(`/twilio/2010-04-01/Accounts/${s.acct.credentials.account_sid}/Calls/${callSid}.json`));
    expect(hangups).toHaveLength(1);
    expect(ledger.byKind.fetch).toBe(got.chats + got.spoken + hangups.length);
    // The run's writes (D1), the recording (one R2 put: the call is shorter than one multipart part) and the run's
    // details object (one put: docs/run-details.md).
    expect(ledger.byKind.d1).toBeGreaterThan(0);
    expect(ledger.byKind.r2).toBe(2);
    withinLimits(ledger, audioMs, "twilio");
  }, 120_000);

  it("Asterisk (the session's outbound media socket); a slow model (its filler spoken while the model's headers are awaited), ElevenLabs speech: within the limits", async () => {
    const s = await setup("ari");
    const e: Engines = { llmKey: key("slow"), stt: "deepgram", sttKey: key(), tts: "elevenlabs", ttsKey: key() };
    const runId = await standinCall(s, e);
    const ledger = ledgerFor(runId);
    const run = await runRow(runId);
    const channelId = run.providerCallId!;
    // What the ARI events object does once the call is answered with a voice agent: the bridge, an external media
    // channel in server mode, and the session connecting to the PBX's media socket.
    const ctx = await loadConfigContext(env, await getConfig(getDb(env), s.org.id, s.configId));
    const media = await startAriMedia(ctx, providerEnvOf(env), channelId, null);
    if (!media.ok || !media.connectUrl) throw new Error(`no media channel: ${JSON.stringify(media)}`);
    const pbx = asteriskMedia(media.connectUrl, mediaIds(channelId).mediaChannelId);
    routeLocally(pbx.answer);
    try {
      const connected = await callSessionStub(env, runId).connectTo(media.connectUrl, await sessionStart(env, run, "ari"));
      expect(connected).toEqual({ ok: true });
      const callee = await pbx.callee;
      const audioMs = await conversation(callee, [SURE.samples, SEATS.samples], (fn) => inSession(runId, fn));
      await finished(runId);

      const got = await served(e);
      // Each turn's socket, and the media socket to the PBX.
      expect(ledger.byKind.websocket).toBe(got.sockets + 1);
      // Model requests, sentences (the filler too) and the hang-up's ARI requests (the run's channel deleted).
      const ari = ledger.requests.filter((u) => u.startsWith(`${SIM}/ari/${s.acct.id}/`) && u !== media.connectUrl);
      expect(ari.some((u) => u.includes(`/channels/${channelId}`))).toBe(true);
      expect(ledger.byKind.fetch).toBe(got.chats + got.spoken + ari.length);
      expect((await standinLog(e.ttsKey)).some((r) => r.body?.text === "One moment.")).toBe(true);
      withinLimits(ledger, audioMs, "asterisk");
    } finally {
      routeLocally(() => null);
    }
  }, 120_000);

  it("over its subrequest limit the session's next request fails as on Cloudflare (the call ends on it)", async () => {
    const { e, runId, ledger } = await deepgramCall();
    const callee = await connect("twilio", runId);
    await onLine(callee, null, repliedThenQuiet(callee));
    // Room for the callee's turn to be transcribed and the model asked, not for the reply to be spoken.
    const limit = ledger.subrequests + 2;
    ledger.limits = { ...WORKERS_LIMITS, subrequests: limit };
    // A loud second: speech to the agent, a short transcript from the stand-in (the failed writes log it whole).
    await onLine(callee, new Int16Array(8000).fill(3000), () => callee.closed !== null, 20_000);
    expect(callee.closed).not.toBeNull();
    expect(ledger.subrequests).toBe(limit);
    // Nothing past the limit reached a provider (every fetch the ledger let through went to a stand-in).
    const got = await served(e);
    expect(got.sockets + got.chats + got.spoken).toBe((ledger.byKind.fetch ?? 0) + (ledger.byKind.websocket ?? 0));
    expect(got.spoken).toBe(1);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("provider_failure");
    // Over the limit even the run's own writes fail: the run cannot record why it ended.
    expect((await runRow(runId)).endReason).toBeNull();
  }, 60_000);
});
