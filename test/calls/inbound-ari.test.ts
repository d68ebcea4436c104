// Calls that come in through Asterisk (against the simulator's ARI): attaching an agent to a number holds the
// configuration's events socket open (listening); a caller's channel entering the Stasis application (StasisStart of a
// channel edgedial did not originate) with the dialed number in its dialplan extension becomes an inbound run, is
// answered and bridged to the run's call session like an answered outbound call (client mode: Asterisk dials our
// stream route), converses, and completes when the caller hangs up. Over the cap the channel is hung up busy (17);
// a number the configuration lacks, unallocated (1); a number without an agent, rejected (21); no run for those.
// Without a voice agent on the media path (the suites' VOICE_AGENT is empty) the answered caller is hung up, as an
// answered outbound ARI call is (ARI has no text-to-speech).
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AriEventsObject } from "../../src/calls/ari/ari-events";
import { callSessionStub } from "../../src/calls/session/stub";
import { CALLEE_PROTOCOLS, CalleeStream } from "../../src/dev/simulator/media/callee";
import { clock } from "../../src/lib/clock";
import { organizationStub } from "../../src/organizations/organization-object";
import { ariEventsStub } from "../../src/telephony/providers/ari/lifecycle";
import { call } from "../helpers";
import { DEFINITION, listen, listenUntil, prepareScripted, SEATS_DISPOSITIONS, SURE } from "./conversation-support";
import { mediaUrl, upgradeAt } from "./media-support";
import { CALLER, eventually, type Setup, setup, sim, simRequests } from "./support";

const CALLING = "+14155550177";
const runsOf = async (orgId: number) =>
  (await env.DB.prepare("SELECT * FROM workflow_runs WHERE org_id = ? ORDER BY id").bind(orgId).all<Record<string, any>>()).results;
const sockets = async (s: Setup) => (await sim<{ sockets: number }>("GET", `/accounts/${s.acct.id}/sockets`)).sockets;
const ariRequests = async (s: Setup) =>
  (await simRequests(s.acct)).map((r) => ({ method: r.method, path: r.path.replace(`/${s.acct.id}/ari`, ""), query: r.query }));

async function attach(s: Setup, workflowId: number | null) {
  const list = await call("GET", `/api/v1/organizations/telephony-configs/${s.configId}/phone-numbers`, { key: s.org.key });
  return call("PUT", `/api/v1/organizations/telephony-configs/${s.configId}/phone-numbers/${list.json.items[0].id}`, {
    key: s.org.key,
    body: { inbound_workflow_id: workflowId },
  });
}

async function inboundSetup() {
  const s = await setup("ari", { ws_client_name: "edgedial_media" });
  const wf = await call("POST", "/api/v1/workflow/create", {
    key: s.org.key,
    body: { name: "seats", workflow_definition: DEFINITION, call_disposition_codes: SEATS_DISPOSITIONS, template_context_variables: { first_name: "Ada" } },
  });
  expect(wf.status, wf.text).toBe(200);
  const attached = await attach(s, wf.json.id);
  expect(attached.status, attached.text).toBe(200);
  return { s, agentId: wf.json.id as number };
}

/** A caller dials `to`: the PBX's dialplan puts the channel into the application (its StasisStart on the socket). */
const dial = async (s: Setup, to = CALLER, asArgument = false) =>
  (await sim<{ channel_id: string; delivered: number }>("POST", `/accounts/${s.acct.id}/inbound`, { to, from: CALLING, as_argument: asArgument })).channel_id;

/** The hang-up edgedial sent for a channel it refused, once it came. */
const refusalOf = (s: Setup, channelId: string) =>
  eventually(
    async () => (await ariRequests(s)).find((r) => r.method === "DELETE" && r.path === `/channels/${channelId}`),
    (r) => r !== undefined,
  );

describe("inbound calls (Asterisk ARI)", () => {
  it("attaching holds the events socket open; a caller's StasisStart becomes an inbound run, answered, bridged, conversing, completed on hang-up", async () => {
    const { s, agentId } = await inboundSetup();
    // Listening: the socket is open with no call in flight.
    expect(await sockets(s)).toBe(1);
    expect(await ariEventsStub(env, s.configId).status()).toMatchObject({ connected: true, inFlight: 0, listening: true });
    // The deployment's voice agent on the media path (the suites' VOICE_AGENT is empty; the session is prepared below).
    const events: DurableObjectStub<AriEventsObject> = ariEventsStub(env, s.configId);
    await runInDurableObject(events, (o: AriEventsObject) => {
      const live = o as unknown as { env: Env };
      live.env = { ...live.env, VOICE_AGENT: "conversation" };
    });

    const channelId = await dial(s);
    expect(channelId).not.toMatch(/^edgedial-/);
    const [run] = await eventually(
      () => runsOf(s.org.id),
      (r) => r.length === 1 && r[0].status === "in_progress",
    );
    expect(run).toMatchObject({ direction: "inbound", phone_number: CALLING, from_number: CALLER, workflow_id: agentId, provider_call_id: channelId });
    expect(JSON.parse(run.initial_context)).toMatchObject({ first_name: "Ada", caller_number: CALLING, called_number: CALLER });
    await prepareScripted(run.id);

    // Answered, then bridged with an external media channel named after Asterisk's channel id, as an outbound call.
    const bridgeId = `edgedial-bridge-in-${channelId}`;
    const mediaChannelId = `edgedial-media-in-${channelId}`;
    const steps = await eventually(
      async () => (await ariRequests(s)).filter((r) => r.method === "POST" && r.path !== "/channels"),
      (r) => r.some((x) => x.path === "/channels/externalMedia"),
    );
    expect(steps.map((r) => r.path)).toEqual([`/channels/${channelId}/answer`, "/bridges", `/bridges/${bridgeId}/addChannel`, "/channels/externalMedia"]);
    expect(steps[1].query.bridgeId).toEqual([bridgeId]);
    expect(steps[2].query.channel).toEqual([channelId]);
    const media = steps[3].query;
    expect(media).toMatchObject({ channelId: [mediaChannelId], connection_type: ["client"], external_host: ["edgedial_media"] });

    // Asterisk dials our stream route with the run's token; the media channel reaching the app joins the bridge.
    await sim("POST", `/accounts/${s.acct.id}/send`, {
      events: [{ type: "StasisStart", application: s.acct.credentials.app_name, args: [], channel: { id: mediaChannelId, state: "Up" } }],
    });
    const token = /token=([^),]+)/.exec(media.transport_data[0])![1];
    const res = await upgradeAt("ari", run.id, await mediaUrl("ari", run.id, token));
    expect(res.status).toBe(101);
    res.webSocket!.accept();
    const callee = new CalleeStream(res.webSocket!, CALLEE_PROTOCOLS.ari);
    callee.open(mediaChannelId);
    await listenUntil(callee, () => callee.played.length >= 1);
    await listen(callee, 300);
    callee.speak(SURE.samples);
    await listenUntil(callee, () => callee.played.length >= 3);
    expect(
      await eventually(
        async () =>
          (await ariRequests(s)).some((r) => r.method === "POST" && r.path === `/bridges/${bridgeId}/addChannel` && r.query.channel?.[0] === mediaChannelId),
        (v) => v,
      ),
    ).toBe(true);

    // The caller hangs up: the channel leaves the app and is destroyed (cause 16).
    const channel = { id: channelId, state: "Up" };
    await sim("POST", `/accounts/${s.acct.id}/send`, {
      events: [
        { type: "StasisEnd", application: s.acct.credentials.app_name, channel },
        { type: "ChannelDestroyed", application: s.acct.credentials.app_name, cause: 16, cause_txt: "Normal Clearing", channel },
      ],
    });
    const api = await eventually(
      async () => (await call("GET", `/api/v1/workflow/${agentId}/runs/${run.id}`, { key: s.org.key })).json,
      (r) => r.status === "completed",
    );
    expect(api).toMatchObject({ direction: "inbound", status: "completed", phone_number: CALLING });
    const snap = await callSessionStub(env, run.id).snapshot();
    expect(snap.turns.slice(0, 2).map((t) => t.text)).toEqual(["Hi Ada!", "Sure, tell me more."]);
    // The bridge and the media channel went with the call; the socket stays open for the next caller.
    await eventually(
      async () => (await ariRequests(s)).some((r) => r.method === "DELETE" && r.path === `/bridges/${bridgeId}`),
      (v) => v,
    );
    expect(await ariEventsStub(env, s.configId).status()).toMatchObject({ connected: true, inFlight: 0, listening: true });
  });

  it("over the cap the channel is hung up busy; an unknown number unallocated; a number without an agent rejected; no runs", async () => {
    const { s } = await inboundSetup();
    await organizationStub(env, s.org.id).setCap(1);
    await organizationStub(env, s.org.id).acquire({ leaseId: "held", ttlSeconds: 60 });
    expect((await refusalOf(s, await dial(s)))?.query.reason).toEqual(["busy"]);
    await organizationStub(env, s.org.id).release("held");

    expect((await refusalOf(s, await dial(s, "+14155550999")))?.query.reason).toEqual(["unallocated"]);
    expect((await attach(s, null)).status).toBe(200);
    expect((await refusalOf(s, await dial(s)))?.query.reason).toEqual(["rejected"]);
    expect(await runsOf(s.org.id)).toHaveLength(0);
    // Nothing was answered.
    expect((await ariRequests(s)).filter((r) => r.path.endsWith("/answer"))).toEqual([]);
  });

  it("the dialed number may come as the Stasis argument; with no number left with an agent the object stops listening", async () => {
    const { s } = await inboundSetup();
    const channelId = await dial(s, CALLER, true);
    const [run] = await eventually(
      () => runsOf(s.org.id),
      (r) => r.length === 1 && r[0].status === "in_progress",
    );
    expect(run.provider_call_id).toBe(channelId);
    // No voice agent on the media path here: answered, then hung up with the run saying why.
    expect(await refusalOf(s, channelId)).toBeDefined();
    await sim("POST", `/accounts/${s.acct.id}/send`, {
      events: [{ type: "ChannelDestroyed", application: s.acct.credentials.app_name, cause: 16, channel: { id: channelId, state: "Up" } }],
    });
    await eventually(
      async () => (await runsOf(s.org.id))[0].status,
      (v) => v === "completed",
    );

    expect((await attach(s, null)).status).toBe(200);
    clock.advance(61_000);
    try {
      await runDurableObjectAlarm(ariEventsStub(env, s.configId));
    } finally {
      clock.advance(-61_000);
    }
    expect(await ariEventsStub(env, s.configId).status()).toMatchObject({ connected: false, listening: false });
    expect(
      await eventually(
        () => sockets(s),
        (n) => n === 0,
      ),
    ).toBe(0);
  });

  it("attaching an agent when the PBX refuses the events socket is a 502 and the number keeps no agent", async () => {
    const s = await setup("ari");
    const wf = await call("POST", "/api/v1/workflow/create", { key: s.org.key, body: { name: "seats", workflow_definition: DEFINITION } });
    await sim("POST", `/accounts/${s.acct.id}/faults`, { op: "events", status: 503, message: "down" });
    const res = await attach(s, wf.json.id);
    expect(res.status, res.text).toBe(502);
    expect(res.json.detail).toMatch(/^ARI events connection failed: the PBX answered HTTP 503/);
    const list = await call("GET", `/api/v1/organizations/telephony-configs/${s.configId}/phone-numbers`, { key: s.org.key });
    expect(list.json.items[0].inbound_workflow_id).toBeNull();
  });
});
