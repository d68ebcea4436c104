// Asterisk (ari) hands a live call to a person: the conversation agent reaches a transferCall node, the person's
// channel is originated into our app, and (the simulated PBX playing that channel's events) on its answer it joins the
// caller's bridge (warm: after the whisper played to it alone), edgedial's media channel is hung up and the run ends
// `transferred`; a person who never answers leaves the caller with the agent, on the node's no-answer edge.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { streamToken } from "../../src/calls/callbacks/callback-urls";
import { callSessionStub } from "../../src/calls/session/stub";
import { CALLEE_PROTOCOLS, CalleeStream } from "../../src/dev/simulator/media/callee";
import { getDb } from "../../src/lib/db";
import { mediaIds, startAriMedia } from "../../src/telephony/providers/ari/media";
import { providerEnvOf } from "../../src/telephony/provisioning";
import { loadConfigContext } from "../../src/telephony/resolve";
import { getConfig } from "../../src/telephony/store";
import { call } from "../helpers";
import { listen, listenUntil, prepareScripted, SURE } from "./conversation-support";
import { mediaUrl, upgradeAt } from "./media-support";
import { hearAgent, say } from "./resume-support";
import { eventually, runApi, runRow, setup, sim, simRequests, startCall, type Setup } from "./support";
import { TRANSFER_SCRIPT, transferDefinition } from "./transfer-support";

const PERSON = "PJSIP/200";
const definition = (mode: "cold" | "warm") => transferDefinition(PERSON, mode);
const SCRIPT = TRANSFER_SCRIPT;

const event = (s: Setup, type: string, extra: Record<string, unknown>) => ({
  type,
  timestamp: new Date().toISOString(),
  application: s.acct.credentials.app_name,
  ...extra,
});
const toPbx = (s: Setup, events: unknown[]) => sim("POST", `/accounts/${s.acct.id}/send`, { events });
const ariRequests = async (s: Setup) => (await simRequests(s.acct)).map((r) => ({ ...r, path: r.path.replace(`/${s.acct.id}/ari`, "") }));

/** An answered ARI call with the transfer agent: the bridge, the media channel, Asterisk connected to the session. */
async function answeredAriCall(mode: "cold" | "warm") {
  const s = await setup("ari", { ws_client_name: "edgedial_media" });
  const wf = await call("POST", "/api/v1/workflow/create", { key: s.org.key, body: { name: "transfer", workflow_definition: definition(mode) } });
  expect(wf.status, wf.text).toBe(200);
  const runId = await startCall({ ...s, agent: wf.json });
  await prepareScripted(runId, SCRIPT as never);
  const channelId = (await runRow(runId)).providerCallId!;
  await toPbx(s, [event(s, "ChannelStateChange", { channel: { id: channelId, state: "Up" } })]);
  await eventually(
    () => runRow(runId),
    (r) => r.status === "in_progress",
  );
  const ctx = await loadConfigContext(env, await getConfig(getDb(env), s.org.id, s.configId));
  const token = await streamToken(env.CALLBACK_SECRET, "ari", runId);
  expect(await startAriMedia(ctx, providerEnvOf(env), channelId, { runId, token })).toEqual({ ok: true, connectUrl: null });
  const { mediaChannelId, bridgeId } = mediaIds(channelId);
  // Asterisk adds the media channel to the bridge once it reaches the app (the events object's job when live).
  await fetch(`http://sim.test/ari/${s.acct.id}/ari/bridges/${bridgeId}/addChannel?channel=${mediaChannelId}`, {
    method: "POST",
    headers: { Authorization: `Basic ${btoa(`${s.acct.credentials.app_name}:${s.acct.credentials.app_password}`)}` },
  });
  const tokenInRequest = (await ariRequests(s)).find((r) => r.path === "/channels/externalMedia")!.query.transport_data[0];
  const res = await upgradeAt("ari", runId, await mediaUrl("ari", runId, /token=([^),]+)/.exec(tokenInRequest)![1]));
  expect(res.status).toBe(101);
  res.webSocket!.accept();
  const callee = new CalleeStream(res.webSocket!, CALLEE_PROTOCOLS.ari);
  callee.open(mediaChannelId);
  await hearAgent(callee);
  return { s, runId, agentId: wf.json.id as number, channelId, mediaChannelId, bridgeId, callee };
}

/** The caller asks for a person; the agent says its message and originates the person's channel. */
async function personDialed(c: Awaited<ReturnType<typeof answeredAriCall>>) {
  say(c.callee, SURE);
  const originate = async () =>
    (await ariRequests(c.s)).find((r) => r.method === "POST" && r.path === "/channels" && r.query.channelId?.[0]?.startsWith("edgedial-xfer-"));
  // The callee's audio is the call's clock: it keeps listening (silence) while the agent answers and transfers.
  for (let i = 0; i < 100 && !(await originate()); i++) await listen(c.callee, 100);
  const found = await originate();
  expect(found, JSON.stringify((await callSessionStub(env, c.runId).snapshot()).turns)).toBeDefined();
  return found!;
}

const bridgeOf = async (c: { s: Setup; bridgeId: string }) => {
  const res = await fetch(`http://sim.test/ari/${c.s.acct.id}/ari/bridges/${c.bridgeId}`, {
    headers: { Authorization: `Basic ${btoa(`${c.s.acct.credentials.app_name}:${c.s.acct.credentials.app_password}`)}` },
  });
  return ((await res.json()) as { channels: string[] }).channels;
};

describe("ari: transfer to a person", () => {
  it("cold: the person's channel originated into our app; on its answer it joins the caller's bridge, the media channel goes, the run ends transferred", async () => {
    const c = await answeredAriCall("cold");
    const originate = await personDialed(c);
    const person = originate.query.channelId[0];
    expect(person).toMatch(new RegExp(`^edgedial-xfer-${c.runId}-[0-9a-f]{8}$`));
    expect(Object.fromEntries(Object.entries(originate.query).map(([k, v]) => [k, v[0]]))).toEqual({
      endpoint: PERSON,
      app: c.s.acct.credentials.app_name,
      appArgs: `transfer=${c.runId},mode=cold`,
      channelId: person,
      timeout: "20",
      callerId: "+14155550100",
    });
    // While the person's phone rings the caller is still with the agent (the media channel stays in the bridge).
    expect(await bridgeOf(c)).toEqual([c.channelId, c.mediaChannelId]);
    await toPbx(c.s, [event(c.s, "StasisStart", { args: [`transfer=${c.runId}`, "mode=cold"], channel: { id: person, state: "Up" } })]);
    await eventually(
      () => bridgeOf(c),
      (ch) => ch.includes(person) && !ch.includes(c.mediaChannelId),
      5000,
    );
    expect(await bridgeOf(c)).toEqual([c.channelId, person]);
    await listenUntil(c.callee, () => c.callee.closed !== null, 5000);
    const snap = await callSessionStub(env, c.runId).snapshot();
    expect(snap.endReason).toBe("transferred");
    const run = await runApi({ ...c.s, agent: { id: c.agentId } as never }, c.runId);
    expect(run.transfer).toMatchObject({ destination: PERSON, mode: "cold", outcome: "connected" });
    // No whisper on a cold transfer, and the caller's channel was never hung up by us.
    const requests = await ariRequests(c.s);
    expect(requests.some((r) => r.path.endsWith("/play"))).toBe(false);
    expect(requests.some((r) => r.method === "DELETE" && r.path === `/channels/${c.channelId}`)).toBe(false);
    // The person hangs up later: the caller, alone in the bridge, is hung up too.
    await toPbx(c.s, [event(c.s, "ChannelDestroyed", { cause: 16, cause_txt: "Normal Clearing", channel: { id: person, state: "Up" } })]);
    await eventually(
      () => ariRequests(c.s),
      (r) => r.some((x) => x.method === "DELETE" && x.path === `/channels/${c.channelId}`),
    );
  });

  it("warm: the whisper plays to the person's channel alone (sound: of the whisper URL), then they are bridged", async () => {
    const c = await answeredAriCall("warm");
    const person = (await personDialed(c)).query.channelId[0];
    await toPbx(c.s, [event(c.s, "StasisStart", { args: [`transfer=${c.runId}`, "mode=warm"], channel: { id: person, state: "Up" } })]);
    // The simulated PBX plays at once and reports PlaybackFinished: then the person joins the caller.
    await eventually(
      () => bridgeOf(c),
      (ch) => ch.includes(person),
      5000,
    );
    const play = (await ariRequests(c.s)).find((r) => r.path === `/channels/${person}/play`);
    expect(play?.method).toBe("POST");
    expect(play?.query.playbackId?.[0]).toBe(person.replace("edgedial-xfer-", "edgedial-whisper-"));
    const media = play!.query.media[0];
    const whisperUrl = /^sound:(https?:\/\/.+)$/.exec(media)?.[1];
    expect(whisperUrl, media).toMatch(new RegExp(`/api/v1/telephony/ari/transfer-whisper/${c.runId}/`));
    // The whisper is a WAV the PBX can fetch (the token in its path is the proof).
    const { exports } = await import("cloudflare:workers");
    const wav = await exports.default.fetch(new Request(whisperUrl!));
    expect(wav.status).toBe(200);
    expect(wav.headers.get("content-type")).toBe("audio/wav");
    expect(new TextDecoder().decode((await wav.arrayBuffer()).slice(0, 4))).toBe("RIFF");
    await listenUntil(c.callee, () => c.callee.closed !== null, 5000);
    expect((await callSessionStub(env, c.runId).snapshot()).endReason).toBe("transferred");
    expect(await bridgeOf(c)).toEqual([c.channelId, person]);
  });

  it("nobody answers: the person's channel destroyed (Q.850 19), the media channel stays and the agent goes on along the no-answer edge", async () => {
    const c = await answeredAriCall("warm");
    const person = (await personDialed(c)).query.channelId[0];
    await toPbx(c.s, [event(c.s, "ChannelDestroyed", { cause: 19, cause_txt: "No user responding", channel: { id: person, state: "Ringing" } })]);
    const run = await eventually(
      () => runApi({ ...c.s, agent: { id: c.agentId } as never }, c.runId),
      (r) => r.transfer?.outcome != null,
      5000,
    );
    expect(run.transfer).toMatchObject({ mode: "warm", outcome: "no_answer", message: expect.stringContaining("Q.850 cause 19") });
    expect(await bridgeOf(c)).toEqual([c.channelId, c.mediaChannelId]);
    // The agent apologizes and hangs up (the no-answer edge), on the same media.
    await listenUntil(c.callee, () => c.callee.closed !== null, 15_000);
    const snap = await callSessionStub(env, c.runId).snapshot();
    expect(snap.endReason).toBe("agent_hangup");
    // The caller was told, and the agent followed the no-answer edge (its goodbye), on the same media.
    expect(snap.turns.find((t) => t.role === "tool")?.text).toMatch(/^transfer_call: error .*no_answer$/);
    expect(snap.turns.at(-1)?.text).toMatch(/nobody was able to pick up.*Sorry, nobody is free\. Goodbye!$/);
  });
});
