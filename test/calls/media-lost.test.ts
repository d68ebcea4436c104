import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { RESUME_GRACE_MS } from "../../src/calls/session/call-session";
import { callSessionStub } from "../../src/calls/session/stub";
import { isFinal } from "../../src/calls/runs/runs";
import { connect } from "./media-support";
import { answeredLiveCall, carriersEnd, deliverLive, hearAgent, resetSession } from "./resume-support";
import { CALLEE, deliverAll, eventually, play, runApi, runRow, setup, simRequests, twoContactCampaign } from "./support";

describe("media lost and never back", () => {
  it("the run ends media_lost within 15 s, the carrier is asked to hang up, and the campaign dials its next contact at once", async () => {
    const s = await setup("twilio");
    const { runs, first } = await twoContactCampaign(s);
    const callId = (await runApi(s, first.id)).provider_call_id as string;

    // Answered; the carrier's final status (its last callback) will be sent while the Worker is down: never delivered.
    const callbacks = (await play(callId, "answered")).filter((c) => c.kind !== "stream");
    await deliverAll(callbacks.slice(0, -1));
    await callSessionStub(env, first.id).prepare({ agent: "echo" });
    const callee = await connect("twilio", first.id);
    callee.silence(200);
    await eventually(
      () => callSessionStub(env, first.id).mediaState(),
      (m) => m === "live",
    );
    // Let a heartbeat save the call's clock, then the deploy: the object restarts and its socket is gone.
    await new Promise((r) => setTimeout(r, 1100));
    const t0 = Date.now();
    await resetSession(first.id);
    await callee.until(() => callee.closed !== null);
    expect(await callSessionStub(env, first.id).mediaState()).toBe("lost");

    const run = await eventually(
      () => runRow(first.id),
      (r) => isFinal(r.status),
      15_000,
    );
    const took = Date.now() - t0;
    expect(isFinal(run.status), `the run is still ${run.status} after ${took} ms`).toBe(true);
    expect(took).toBeGreaterThanOrEqual(RESUME_GRACE_MS - 100);
    expect(took).toBeLessThan(15_000);
    expect(run.status).toBe("completed");
    expect(run.endReason).toBe("media_lost");
    expect(run.notes).toMatch(/media connection was lost/);
    expect((await callSessionStub(env, first.id).snapshot()).endReason).toBe("media_lost");
    // The recording's begun part, kept by the heartbeat before the restart, is stored with the run: 200 ms of the
    // callee, two channels of μ-law (a byte a sample) at 8 kHz.
    const recorded = await eventually(
      () => runRow(first.id),
      (r) => r.recordingKey !== null,
    );
    expect((await env.UPLOADS.head(recorded.recordingKey!))?.size).toBe(0.2 * 8000 * 2);
    // The carrier was asked to end the call (Twilio: the call updated to canceled, then completed while it is up).
    const hangups = (await simRequests(s.acct)).filter((r) => r.method === "POST" && r.path.endsWith(`/Calls/${callId}.json`));
    expect(hangups.length).toBeGreaterThanOrEqual(1);
    expect(hangups[0].body).toMatch(/^Status=(canceled|completed)$/);
    // The campaign's only slot came back with the run's end: its second contact is dialed without waiting for more.
    const second = await eventually(runs, (rs) => rs.length === 2, 3000);
    expect(second.map((r) => r.phoneNumber)).toEqual([CALLEE, "+14155550177"]);
  });
});

describe("the carrier's end of a call whose session is restarting", () => {
  it("a final status during the outage ends the session at once as the callee's hang-up, with no hang-up request", async () => {
    const s = await setup("twilio");
    const { runId, callId, callee } = await answeredLiveCall(s, "twilio");
    await hearAgent(callee);
    await resetSession(runId);
    await callee.until(() => callee.closed !== null);
    const t0 = Date.now();
    const end = carriersEnd.get(callId)!;
    expect(end.map((c) => c.kind)).toEqual(["status"]);
    await deliverLive(end[0]);
    expect(Date.now() - t0).toBeLessThan(RESUME_GRACE_MS);
    expect(await callSessionStub(env, runId).snapshot()).toMatchObject({ ended: true, endReason: "callee_hangup" });
    const run = await runRow(runId);
    expect(run.status).toBe("completed");
    expect(run.endReason).toBe("callee_hangup");
    expect((await simRequests(s.acct)).filter((r) => r.method === "POST" && r.path.endsWith(`/Calls/${callId}.json`))).toEqual([]);
  });
});
