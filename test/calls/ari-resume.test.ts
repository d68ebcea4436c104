// Asterisk's call whose session is reset mid-conversation: Asterisk hangs the external media channel up when its
// WebSocket closes, the call's own channel stays up in its bridge, and the ARI events object asks for a new external
// media channel into the same bridge (client mode: Asterisk dials our stream route with a fresh token, as the test does
// here in Asterisk's place). Seen from its events (the media channel destroyed) or from its heartbeat alone.
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { streamToken } from "../../src/calls/callbacks/callback-urls";
import { callSessionStub } from "../../src/calls/session/stub";
import { CALLEE_PROTOCOLS, CalleeStream } from "../../src/dev/simulator/media/callee";
import { getDb } from "../../src/lib/db";
import { ariEventsStub } from "../../src/telephony/providers/ari/lifecycle";
import { mediaIds, startAriMedia } from "../../src/telephony/providers/ari/media";
import { providerEnvOf } from "../../src/telephony/provisioning";
import { loadConfigContext } from "../../src/telephony/resolve";
import { getConfig } from "../../src/telephony/store";
import { listenUntil, prepareScripted, SEATS, startSeatsCall, SURE } from "./conversation-support";
import { mediaUrl, upgradeAt } from "./media-support";
import { hearAgent, resetSession, say } from "./resume-support";
import { eventually, runRow, setup, sim, simRequests, type Setup } from "./support";

const event = (s: Setup, type: string, channel: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type,
  timestamp: new Date().toISOString(),
  application: s.acct.credentials.app_name,
  channel,
  ...extra,
});
const toPbxEvents = (s: Setup, events: unknown[]) => sim("POST", `/accounts/${s.acct.id}/send`, { events });

/** The external media channels asked for so far, with the stream token each carries for Asterisk to dial us with. */
async function mediaChannels(s: Setup): Promise<string[]> {
  return (await simRequests(s.acct))
    .filter((r) => r.path.endsWith("/channels/externalMedia"))
    .map((r) => /token=([^),]+)/.exec(r.query.transport_data?.[0] ?? "")?.[1] ?? "");
}

/** Asterisk dialling our stream route for the run with `token`, and its MEDIA_START. */
async function asteriskConnects(runId: number, token: string, mediaChannelId: string): Promise<CalleeStream> {
  const res = await upgradeAt("ari", runId, await mediaUrl("ari", runId, token));
  expect(res.status).toBe(101);
  res.webSocket!.accept();
  const callee = new CalleeStream(res.webSocket!, CALLEE_PROTOCOLS.ari);
  callee.open(mediaChannelId);
  return callee;
}

/** The seats agent's ARI call, answered (the channel Up), its media channel opened and Asterisk connected to us. */
async function answeredAriCall() {
  const s = await setup("ari", { ws_client_name: "edgedial_media" });
  const { runId } = await startSeatsCall(s);
  await prepareScripted(runId);
  const channelId = (await runRow(runId)).providerCallId!;
  await toPbxEvents(s, [event(s, "ChannelStateChange", { id: channelId, state: "Up" })]);
  await eventually(
    () => runRow(runId),
    (r) => r.status === "in_progress",
  );
  // What the events object does on StasisStart with a voice agent: the bridge, and a media channel Asterisk dials us from.
  const ctx = await loadConfigContext(env, await getConfig(getDb(env), s.org.id, s.configId));
  const media = await startAriMedia(ctx, providerEnvOf(env), channelId, { runId, token: await streamToken(env.CALLBACK_SECRET, "ari", runId) });
  expect(media).toEqual({ ok: true, connectUrl: null });
  const { mediaChannelId } = mediaIds(channelId);
  const [token] = await mediaChannels(s);
  const callee = await asteriskConnects(runId, token, mediaChannelId);
  await hearAgent(callee);
  say(callee, SURE);
  await hearAgent(callee);
  return { s, runId, channelId, mediaChannelId, callee, token };
}

/** After the reset: the new media channel's token, Asterisk dialling us with it, and the rest of the conversation. */
async function goesOn(s: Setup, runId: number, mediaChannelId: string, oldToken: string) {
  const tokens = await eventually(
    () => mediaChannels(s),
    (t) => t.length === 2,
    5000,
  );
  expect(tokens[1]).not.toBe(oldToken);
  const requests = (await simRequests(s.acct)).map((r) => `${r.method} ${r.path.replace(`/${s.acct.id}/ari`, "")}`);
  // The lost channel went first; the call's channel and its bridge stayed.
  expect(requests.slice(-2)).toEqual([`DELETE /channels/${mediaChannelId}`, "POST /channels/externalMedia"]);
  const again = await asteriskConnects(runId, tokens[1], mediaChannelId);
  await hearAgent(again, 400, 2000);
  say(again, SEATS);
  await listenUntil(again, () => again.closed !== null);
  const snap = await callSessionStub(env, runId).snapshot();
  expect(snap.endReason).toBe("agent_hangup");
  expect(snap.turns.map((t) => t.text)).toEqual([
    "Hi Ada!",
    "Sure, tell me more.",
    "Great. How many seats do you need?",
    "We need twelve seats.",
    "Thank you, goodbye!",
  ]);
}

describe("ARI: a call whose session is reset mid-conversation", () => {
  it("the media channel's end (Asterisk's event): a new media channel into the same bridge, and the conversation goes on", async () => {
    const { s, runId, mediaChannelId, callee, token } = await answeredAriCall();
    await resetSession(runId);
    await callee.until(() => callee.closed !== null);
    // Asterisk, its WebSocket gone, hangs the media channel up.
    await toPbxEvents(s, [
      event(s, "StasisEnd", { id: mediaChannelId, state: "Up" }),
      event(s, "ChannelDestroyed", { id: mediaChannelId, state: "Up" }, { cause: 16 }),
    ]);
    await goesOn(s, runId, mediaChannelId, token);
  });

  it("no event at all: the events object's heartbeat finds the session's media lost and reconnects it", async () => {
    const { s, runId, mediaChannelId, callee, token } = await answeredAriCall();
    await resetSession(runId);
    await callee.until(() => callee.closed !== null);
    await runDurableObjectAlarm(ariEventsStub(env, s.configId));
    await goesOn(s, runId, mediaChannelId, token);
  });
});
