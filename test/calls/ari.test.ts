// ARI against the simulator: the originate request, outcomes arriving over the events WebSocket held by
// the configuration's Durable Object (Q.850 causes), our hang-up, reconnecting after a drop or an
// ApplicationReplaced, and a configuration that keeps failing becoming inactive.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ARI_MAX_FAILURES, ARI_NO_SPEECH_NOTE, ARI_UNSEEN_END } from "../../src/calls/ari/ari-events";
import { ariEventsStub } from "../../src/telephony/providers/ari/lifecycle";
import { hangupRun } from "../../src/calls/start/start";
import { openWebSocket } from "../../src/lib/websocket-open";
import { call } from "../helpers";
import { sqlOf } from "../campaigns/engine-harness";
import { CALLEE, CALLER, eventually, placedCampaignCall, play, runRow, setup, sim, simFault, simRequests, startCall, type Setup, CONTEXT } from "./support";

const sockets = async (s: Setup) => (await sim<{ sockets: number }>("GET", `/accounts/${s.acct.id}/sockets`)).sockets;
const statusOf = async (runId: number) => (await runRow(runId)).status;
const until = (runId: number, status: string) =>
  eventually(
    () => statusOf(runId),
    (v) => v === status,
  );

describe("ari", () => {
  it("originates with the dial template, Basic auth, app/appArgs and our own channel id", async () => {
    const s = await setup("ari", { dial_string_template: "Local/{number}@from-internal", allowed_dial_strings: ["PJSIP/{number}@sipp"] });
    const runId = await startCall(s, { phone_number: "1001" });
    const [r] = (await simRequests(s.acct)).filter((x) => x.method === "POST");
    expect(r.path).toBe(`/${s.acct.id}/ari/channels`);
    expect(r.headers.authorization).toBe(`Basic ${btoa(`${s.acct.credentials.app_name}:${s.acct.credentials.app_password}`)}`);
    expect(r.body).toBe("");
    const q = Object.fromEntries(Object.entries(r.query).map(([k, v]) => [k, v[0]]));
    expect(Object.keys(q).sort()).toEqual(["app", "appArgs", "callerId", "channelId", "endpoint", "timeout"]);
    expect(q).toMatchObject({
      endpoint: "Local/1001@from-internal",
      app: s.acct.credentials.app_name,
      appArgs: `run=${runId}`,
      timeout: "30",
      callerId: CALLER,
    });
    expect(q.channelId).toMatch(new RegExp(`^edgedial-run-${runId}-[0-9a-f]{8}$`));
    expect((await runRow(runId)).providerCallId).toBe(q.channelId);
    // A dial string of a form the configuration allows is used as is.
    await startCall(s, { phone_number: "PJSIP/200@sipp" });
    expect((await simRequests(s.acct)).filter((x) => x.method === "POST")[1].query.endpoint).toEqual(["PJSIP/200@sipp"]);
  });

  it("learns every outcome from the events WebSocket, and closes it when no call is in flight", async () => {
    const s = await setup("ari");
    const expected = { answered: "completed", busy: "busy", no_answer: "no_answer", declined: "declined", failed: "failed" } as const;
    for (const [outcome, status] of Object.entries(expected)) {
      const runId = await startCall(s);
      expect(await sockets(s)).toBe(1);
      await play((await runRow(runId)).providerCallId!, outcome as keyof typeof expected);
      expect(await until(runId, status), outcome).toBe(status);
    }
    expect(
      await eventually(
        () => sockets(s),
        (n) => n === 0,
      ),
    ).toBe(0);
    expect(await ariEventsStub(env, s.configId).status()).toMatchObject({ connected: false, inFlight: 0 });
  });

  it("an answered call records answer and duration; events for channels it does not track are ignored", async () => {
    const s = await setup("ari");
    const runId = await startCall(s);
    await sim("POST", `/accounts/${s.acct.id}/send`, {
      events: [
        { type: "ChannelDestroyed", cause: 17, channel: { id: "edgedial-run-999999-00000000" } },
        { type: "ChannelDestroyed", cause: 17, channel: { id: "unrelated" } },
      ],
    });
    await play((await runRow(runId)).providerCallId!, "answered");
    expect(await until(runId, "completed")).toBe("completed");
    const run = await runRow(runId);
    expect(run.answeredAt).not.toBeNull();
    expect(run.endedAt).not.toBeNull();
    // Nothing can be spoken over ARI yet: the answered channel is hung up, and the run says why.
    expect(run.notes).toBe(ARI_NO_SPEECH_NOTE);
    expect(
      await eventually(
        async () => (await simRequests(s.acct)).filter((r) => r.method === "DELETE").map((r) => r.path),
        (p) => p.length > 0,
      ),
    ).toEqual([`/${s.acct.id}/ari/channels/${run.providerCallId}`]);
  });

  it("duplicate and out-of-order events change nothing after the final one", async () => {
    const s = await setup("ari");
    const runId = await startCall(s);
    const id = (await runRow(runId)).providerCallId!;
    const destroyed = { type: "ChannelDestroyed", cause: 17, cause_txt: "User busy", channel: { id, state: "Ringing" } };
    await sim("POST", `/accounts/${s.acct.id}/send`, { events: [destroyed, destroyed] });
    expect(await until(runId, "busy")).toBe("busy");
    const done = await runRow(runId);
    await sim("POST", `/accounts/${s.acct.id}/send`, {
      events: [
        { type: "ChannelStateChange", channel: { id, state: "Up" } },
        { ...destroyed, cause: 16 },
      ],
    });
    // Give the late events time to arrive; the run must not move.
    await eventually(
      () => runRow(runId),
      () => false,
      300,
    );
    expect(await runRow(runId)).toEqual(done);
  });

  it("our hang-up while ringing ends as canceled (cause 16 after our DELETE)", async () => {
    const s = await setup("ari");
    const runId = await startCall(s);
    const channelId = (await runRow(runId)).providerCallId!;
    await sim("POST", `/accounts/${s.acct.id}/send`, { events: [{ type: "ChannelStateChange", channel: { id: channelId, state: "Ringing" } }] });
    expect(await until(runId, "ringing")).toBe("ringing");
    await hangupRun(env, s.org.id, runId);
    expect(await until(runId, "canceled")).toBe("canceled");
    // DELETE again: 404 from the PBX counts as already gone.
    await hangupRun(env, s.org.id, runId);
    const deletes = (await simRequests(s.acct)).filter((r) => r.method === "DELETE");
    expect(deletes.map((r) => r.path)).toEqual([`/${s.acct.id}/ari/channels/${channelId}`, `/${s.acct.id}/ari/channels/${channelId}`]);
  });

  it("a PBX that refuses the events socket refuses the call: 502, the run failed, nothing dialled", async () => {
    const s = await setup("ari");
    await simFault(s.acct, "events", 401, "Authentication required");
    const res = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: s.org.key,
      body: { phone_number: CALLEE, initial_context: CONTEXT },
    });
    expect(res.status).toBe(502);
    expect(res.json.detail).toMatch(/^ARI events connection failed: the PBX answered HTTP 401/);
    expect((await simRequests(s.acct)).filter((r) => /channels$/.test(r.path))).toHaveLength(0);
  });

  it("reconnects after a drop (backoff alarm) and after ApplicationReplaced, and still learns the outcome", async () => {
    const s = await setup("ari");
    const stub = ariEventsStub(env, s.configId);
    const runId = await startCall(s);
    const channelId = (await runRow(runId)).providerCallId!;

    await sim("POST", `/accounts/${s.acct.id}/drop`, { code: 1011 });
    expect(
      await eventually(
        () => stub.status(),
        (st) => !st.connected,
      ),
    ).toMatchObject({ connected: false, inFlight: 1, failures: 1 });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.status()).toMatchObject({ connected: true, failures: 0 });

    // Another client takes the application's socket: ours hears ApplicationReplaced and reconnects on its alarm.
    const other = await fetch(
      `http://sim.test/ari/${s.acct.id}/ari/events?app=${s.acct.credentials.app_name}&api_key=${s.acct.credentials.app_name}:${s.acct.credentials.app_password}`,
      { headers: { Upgrade: "websocket" } },
    );
    expect(other.status).toBe(101);
    other.webSocket!.accept();
    expect(
      await eventually(
        () => stub.status(),
        (st) => !st.connected,
      ),
    ).toMatchObject({ connected: false, failures: 1 });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await stub.status()).connected).toBe(true);

    await play(channelId, "busy");
    expect(await until(runId, "busy")).toBe("busy");
  });

  it("after a drop, a campaign call not yet answered (its channel id only in its campaign's object) is still checked", async () => {
    const s = await setup("ari");
    const stub = ariEventsStub(env, s.configId);
    const { stub: campaign, run } = await placedCampaignCall(s);
    expect(run.providerCallId).toBeNull();
    const [{ provider_call_id: channelId }] = await sqlOf<{ provider_call_id: string }>(campaign, "SELECT provider_call_id FROM attempts");
    expect(channelId).toMatch(new RegExp(`^edgedial-run-${run.id}-`));
    await eventually(
      () => stub.status(),
      (st) => st.connected && st.inFlight === 1,
    );

    await sim("POST", `/accounts/${s.acct.id}/drop`, { code: 1011 });
    await eventually(
      () => stub.status(),
      (st) => !st.connected,
    );
    await play(channelId, "no_answer");
    // The reconnect checks the channel (by the id its campaign holds), finds it gone, and ends the run.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.status()).toMatchObject({ inFlight: 0 });
    expect(await runRow(run.id)).toMatchObject({ status: "unknown", error: ARI_UNSEEN_END, providerCallId: channelId });
  });

  it("wakes on a heartbeat while calls are in flight, and after a drop learns which calls ended unseen", async () => {
    const s = await setup("ari");
    const stub = ariEventsStub(env, s.configId);
    const ended = await startCall(s);
    const ringing = await startCall(s);
    // The heartbeat keeps the object (and its socket) alive while calls are in flight.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.status()).toMatchObject({ connected: true, inFlight: 2 });

    await sim("POST", `/accounts/${s.acct.id}/drop`, { code: 1011 });
    await eventually(
      () => stub.status(),
      (st) => !st.connected,
    );
    // The PBX ends one call while nobody listens: its ChannelDestroyed is lost.
    await play((await runRow(ended)).providerCallId!, "no_answer");
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.status()).toMatchObject({ connected: true, inFlight: 1 });
    expect(await runRow(ended)).toMatchObject({ status: "unknown", error: ARI_UNSEEN_END });
    // The other is still ringing and is still followed to its end.
    expect((await runRow(ringing)).status).not.toBe("unknown");
    await play((await runRow(ringing)).providerCallId!, "busy");
    expect(await until(ringing, "busy")).toBe("busy");
    // Nothing in flight: the next wake closes the socket and schedules nothing more.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.status()).toMatchObject({ connected: false, inFlight: 0 });
    expect(await runDurableObjectAlarm(stub)).toBe(false);
  });

  it("an opened socket outlives the handshake's time limit (which once cut the events socket 10 s in)", async () => {
    const s = await setup("ari");
    const { app_name, app_password } = s.acct.credentials;
    const res = await openWebSocket(`http://sim.test/ari/${s.acct.id}/ari/events?app=${app_name}&api_key=${app_name}:${app_password}`, {}, 100);
    expect(res.status).toBe(101);
    const ws = res.webSocket!;
    ws.accept();
    const closed = new Promise<number>((resolve) => ws.addEventListener("close", (e) => resolve(e.code)));
    await new Promise((r) => setTimeout(r, 300));
    // Still open three limits later: it is the simulator's own close that ends it, not an abort (1006).
    await sim("POST", `/accounts/${s.acct.id}/drop`, { code: 1011 });
    expect(await closed).toBe(1011);
  });

  it("a configuration whose events socket keeps failing becomes inactive with its reason", async () => {
    const s = await setup("ari");
    const stub = ariEventsStub(env, s.configId);
    const runId = await startCall(s);
    await simFault(s.acct, "events", 503, "Service Unavailable", 100);
    await sim("POST", `/accounts/${s.acct.id}/drop`, {});
    await eventually(
      () => stub.status(),
      (st) => st.failures === 1,
    );
    for (let i = 1; i < ARI_MAX_FAILURES; i++) expect(await runDurableObjectAlarm(stub)).toBe(true);
    const cfg = await call("GET", `/api/v1/organizations/telephony-configs/${s.configId}`, { key: s.org.key });
    expect(cfg.json).toMatchObject({ inactive: true, inactive_since: expect.any(String) });
    expect(cfg.json.inactive_reason).toMatch(/ARI events connection failed 5 times in a row: the PBX answered HTTP 503/);
    expect(cfg.json.setup_checklist.ready_for_outbound).toBe(false);
    // The call's outcome cannot be known any more, and new calls are refused.
    expect(await runRow(runId)).toMatchObject({ status: "unknown", error: expect.stringContaining("ARI events connection") });
    const refused = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: s.org.key,
      body: { phone_number: CALLEE, initial_context: CONTEXT },
    });
    expect(refused.status).toBe(409);
    expect(refused.json.detail).toContain("inactive");
  });
});
