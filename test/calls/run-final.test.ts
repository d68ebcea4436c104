// A run is final when the call is over, whoever noticed first (issue 39). A call the session ends itself (here: the
// callee silent) is final at once, its organization lease and campaign slot given back, though the carrier's final
// callback is never delivered (Twilio sends it once); delivered late, that callback changes nothing and counts
// nothing twice. An inbound call answered whose media never connects is hung up through the carrier and its run
// ended within seconds, not by the hourly watchdog.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { isFinal } from "../../src/calls/runs/runs";
import { MEDIA_WAIT_MS } from "../../src/calls/session/run-final";
import { callSessionStub } from "../../src/calls/session/stub";
import type { CalleeStream } from "../../src/dev/simulator/media/callee";
import { organizationStub } from "../../src/organizations/organization-object";
import { call } from "../helpers";
import { dial, inboundSetup, runsOf } from "./inbound-support";
import { connect, ECHO_WORKER, fetchWorker, upgrade } from "./media-support";
import {
  CALLEE,
  CALLER,
  callbackRequest,
  CONTEXT,
  deliver,
  deliverAll,
  eventually,
  flush,
  play,
  runApi,
  runRow,
  twoContactCampaign,
  setup,
  sim,
  simHang,
  simRequests,
  startCall,
  type Setup,
} from "./support";

// Twilio answers the configuration's number only once the simulator's account holds it.
const inboundTwilio = () => inboundSetup("twilio", (s) => sim("POST", `/accounts/${s.acct.id}/numbers`, { number: CALLER }));
const untilClosed = (callee: CalleeStream) => callee.until(() => callee.closed !== null);
const inUse = async (orgId: number) => (await organizationStub(env, orgId).usage()).inUse;
const hangupsOf = async (s: Setup, callId: string) =>
  (await simRequests(s.acct)).filter((r) => r.method === "POST" && r.path.endsWith(`/Calls/${callId}.json`) && /Status=completed/.test(r.body)).length;

/** The call answered (every callback but the carrier's final one delivered), its session on, the callee silent. */
async function silentCall(s: Setup, runId: number) {
  const callId = (await runApi(s, runId)).provider_call_id as string;
  const callbacks = (await play(callId, "answered")).filter((c) => c.kind !== "stream");
  const final = callbacks.at(-1)!;
  expect(final.body).toMatch(/CallStatus=completed/);
  await deliverAll(callbacks.slice(0, -1));
  expect((await runRow(runId)).status).toBe("in_progress");
  await callSessionStub(env, runId).prepare({ agent: "echo", silenceSeconds: 1 });
  const callee = await connect("twilio", runId);
  callee.silence(200);
  return { callId, final, callee };
}

describe("a call the session ends is final at once", () => {
  it("the carrier's final callback never delivered: completed, the slot free within 5 s; delivered late it changes nothing", async () => {
    const s = await setup("twilio");
    await organizationStub(env, s.org.id).setCap(1);
    const runId = await startCall(s);
    const { final, callee } = await silentCall(s, runId);
    await untilClosed(callee);
    const run = await eventually(
      () => runRow(runId),
      (r) => isFinal(r.status),
      5_000,
    );
    expect(run).toMatchObject({ status: "completed", endReason: "callee_silent", durationSeconds: expect.any(Number) });
    expect(run.endedAt).not.toBeNull();
    expect(await inUse(s.org.id)).toBe(0);
    // A second call at the cap of 1 is placed: the first one's slot came back.
    const second = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: s.org.key,
      body: { phone_number: CALLEE, initial_context: CONTEXT },
    });
    expect(second.status, second.text).toBe(200);
    expect(await inUse(s.org.id)).toBe(1);

    // The carrier's final status, late: accepted, the run unchanged, the second call's lease untouched.
    expect((await deliver(final)).status).toBeLessThan(300);
    expect(await runRow(runId)).toMatchObject({ status: "completed", endReason: "callee_silent", endedAt: run.endedAt });
    expect(await inUse(s.org.id)).toBe(1);
  });

  it("a heartbeat during the end (the run made final meanwhile) waits for it: the end still stores the call's results", async () => {
    // Telnyx hangs up by command; the simulated carrier sits on it for 4 s. While the end waits on it the carrier's
    // final status makes the run final, and the session's heartbeat comes. Releasing then deleted the transcript the
    // end reads next ("no such table: turns"), and the call's results were never stored.
    const s = await setup("telnyx");
    const runId = await startCall(s);
    const callId = (await runApi(s, runId)).provider_call_id as string;
    await deliverAll((await play(callId, "answered")).filter((c) => c.kind !== "stream"));
    await callSessionStub(env, runId).prepare({ agent: "echo", silenceSeconds: 1 });
    await simHang(s.acct, "hangup", 4_000);
    const callee = await connect("telnyx", runId);
    callee.silence(200);
    const hangupAsked = async () => (await simRequests(s.acct)).some((r) => r.path.endsWith(`/${callId}/actions/hangup`));
    expect(await eventually(hangupAsked, (asked) => asked, 15_000)).toBe(true);
    await env.DB.prepare("UPDATE workflow_runs SET status = 'completed' WHERE id = ?").bind(runId).run();
    // The session's heartbeat, due now (here the end began in the heartbeat itself, so one is set for it).
    const session = callSessionStub(env, runId);
    await runInDurableObject(session, (_, state) => state.storage.setAlarm(Date.now() + 60_000));
    expect(await runDurableObjectAlarm(session)).toBe(true);
    const saved = await eventually(
      () => runRow(runId),
      (r) => r.recordingKey !== null,
      15_000,
    );
    expect(saved.recordingKey).not.toBeNull();
    expect(saved.endReason).toBe("callee_silent");
  }, 45_000);

  it("a campaign's call: its slot goes to the next contact at once; the late final callback counts nothing twice", async () => {
    const s = await setup("twilio");
    const { stub, runs, first } = await twoContactCampaign(s);
    const { final, callee } = await silentCall(s, first.id);
    await untilClosed(callee);

    expect(
      (
        await eventually(
          () => runRow(first.id),
          (r) => isFinal(r.status),
          5_000,
        )
      ).status,
    ).toBe("completed");
    // The campaign heard it: its one slot is free and the second contact is dialed.
    const after = await eventually(
      async () => {
        await runDurableObjectAlarm(stub);
        return runs();
      },
      (r) => r.length === 2,
      5_000,
    );
    expect(after).toHaveLength(2);
    const counts = await stub.counts();
    // The callee said nothing: answered, no conversation (issue 39), not a contact reached.
    expect(counts).toMatchObject({ completed: 0, answered_no_conversation: 1, executed: 2 });

    expect((await deliver(final)).status).toBeLessThan(300);
    await runDurableObjectAlarm(stub);
    expect(await stub.counts()).toEqual(counts);
    expect((await runRow(first.id)).status).toBe("completed");
  });
});

describe("an admitted inbound call whose media never connects", () => {
  it("is hung up through the carrier and its run ended within 15 s, its slot free for the next caller", async () => {
    const { s } = await inboundTwilio();
    await organizationStub(env, s.org.id).setCap(1);
    const cb = await dial(s);
    const res = await fetchWorker(callbackRequest(cb), ECHO_WORKER);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toMatch(/<Stream /);
    const [run] = await runsOf(s.org.id);
    expect(run).toMatchObject({ direction: "inbound", status: "in_progress" });
    expect(await inUse(s.org.id)).toBe(1);
    const t0 = Date.now();

    // No media connects. The session's deadline hangs the call up and ends the run. (Asking the simulator as we wait
    // keeps its object, which holds the accounts in memory, from being evicted while idle.)
    const ended = await eventually(
      async () => (await simRequests(s.acct)) && runRow(run.id),
      (r) => isFinal(r.status),
      15_000,
    );
    const took = Date.now() - t0;
    expect(isFinal(ended.status), `the run is still ${ended.status} after ${took} ms`).toBe(true);
    expect(took).toBeGreaterThanOrEqual(MEDIA_WAIT_MS - 1_000);
    expect(ended).toMatchObject({ status: "completed", endReason: "media_error", durationSeconds: 0 });
    expect(ended.notes).toMatch(/media never connected within 10 s/);
    expect(await hangupsOf(s, run.provider_call_id)).toBeGreaterThan(0);
    expect(await inUse(s.org.id)).toBe(0);

    // The next caller is put through (not refused busy at the cap of 1).
    const next = await fetchWorker(callbackRequest(await dial(s)), ECHO_WORKER);
    expect(next.text).toMatch(/<Stream /);
    expect(await runsOf(s.org.id)).toHaveLength(2);
  }, 30_000);

  it("media that comes while the deadline's hang-up is out is refused, and the run still ends", async () => {
    // Telnyx hangs up by command, and the simulated carrier sits on that command for 4 s: the deadline's work has
    // begun (the run is not yet final, so the stream route lets the socket through to the session) when the media
    // comes. A session that took it would start a conversation whose storage the deadline then deletes under it.
    const { s } = await inboundSetup("telnyx");
    expect((await fetchWorker(callbackRequest(await dial(s)), ECHO_WORKER)).status).toBe(204);
    const [run] = await runsOf(s.org.id);
    for (const ev of await flush(run.provider_call_id)) expect((await fetchWorker(callbackRequest(ev), ECHO_WORKER)).status).toBeLessThan(300);
    await simHang(s.acct, "hangup", 4_000);
    const hangupAsked = async () => (await simRequests(s.acct)).some((r) => r.path.endsWith(`/${run.provider_call_id}/actions/hangup`));
    expect(await eventually(hangupAsked, (asked) => asked, 20_000)).toBe(true);
    expect(isFinal((await runRow(run.id)).status)).toBe(false);

    const late = await upgrade("telnyx", run.id);
    expect(late.status, await late.text()).toBe(409);
    const ended = await eventually(
      () => runRow(run.id),
      (r) => isFinal(r.status),
      15_000,
    );
    expect(ended).toMatchObject({ status: "completed", endReason: "media_error" });
    expect(await callSessionStub(env, run.id).snapshot()).toMatchObject({ ended: true, turns: [] });
  }, 45_000);

  it("a call whose media connects in time is left alone by the deadline", async () => {
    const { s } = await inboundTwilio();
    const res = await fetchWorker(callbackRequest(await dial(s)), ECHO_WORKER);
    expect(res.status, res.text).toBe(200);
    const [run] = await runsOf(s.org.id);
    await callSessionStub(env, run.id).prepare({ agent: "echo" });
    const callee = await connect("twilio", run.id);
    callee.silence(200);
    for (const until = Date.now() + MEDIA_WAIT_MS + 1_500; Date.now() < until; ) await new Promise((r) => setTimeout(r, 200));
    expect(await callSessionStub(env, run.id).mediaState()).toBe("live");
    expect((await runRow(run.id)).status).toBe("in_progress");
    callee.hangup();
    await untilClosed(callee);
  }, 30_000);
});
