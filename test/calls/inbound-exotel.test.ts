// Calls that come in on Exotel: the Exophone's flow runs a Voicebot applet whose URL is the number's inbound_url (a
// wss:// URL with the configuration's token); Exotel opens it once the call is answered and sends connected and
// start (from, to). The Worker admits the call and pipes the stream to the run's call session: the caller talks with
// the agent and the stream's stop ends the run. A forged token is 401 before the socket; a number without an agent
// or a caller over the cap gets the socket closed with the reason, and no run.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CALLEE_PROTOCOLS, CalleeStream } from "../../src/dev/simulator/media/callee";
import type { Callback } from "../../src/dev/simulator/types";
import { organizationStub } from "../../src/organizations/organization-object";
import { callSessionStub } from "../../src/calls/session/stub";
import { listen, listenUntil, prepareScripted, runWhen, SURE } from "./conversation-support";
import { CALLER, sim, type Setup } from "./support";
import { attach, CALLING, inboundSetup, runsOf } from "./inbound-support";

/** The id the next run will get (AUTOINCREMENT): its session is prepared before the call creates the run. */
async function nextRunId(): Promise<number> {
  const r = await env.DB.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'workflow_runs'").first<{ seq: number }>();
  return (r?.seq ?? 0) + 1;
}

/** A caller dials the Exophone: the applet's upgrade to `url`, then Exotel's connected and start on the socket. */
async function dialExotel(s: Setup, url: string) {
  const cb = (await sim<{ callback: Callback }>("POST", `/accounts/${s.acct.id}/inbound`, { to: CALLER, from: CALLING, url })).callback;
  const res = await exports.default.fetch(new Request(cb.url.replace(/^ws/, "http"), { headers: cb.headers }));
  return { cb, res };
}

async function answered(s: Setup, url: string) {
  const { cb, res } = await dialExotel(s, url);
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const callee = new CalleeStream(ws, CALLEE_PROTOCOLS.exotel);
  for (const f of cb.frames ?? []) ws.send(f);
  return { cb, callee };
}

async function closedWithin(callee: CalleeStream, ms = 5000) {
  await Promise.race([callee.until(() => !!callee.closed), new Promise((r) => setTimeout(r, ms))]);
  return callee.closed;
}

describe("inbound calls (Exotel)", () => {
  it("the Voicebot applet's socket reaches the agent, who converses; stop completes the run inbound", async () => {
    const { s, agentId, number } = await inboundSetup("exotel");
    expect(number.inbound_url).toMatch(new RegExp(`^ws://edgedial\\.test/api/v1/telephony/exotel/inbound-stream/${s.configId}/[0-9a-f]{64}$`));
    const runId = await nextRunId();
    await prepareScripted(runId);

    const { cb, callee } = await answered(s, `${number.inbound_url}?campaign=spring`);
    await listenUntil(callee, () => callee.played.length >= 1);
    const [run] = await runsOf(s.org.id);
    const sid = JSON.parse(cb.frames![1]).start.call_sid;
    expect(run).toMatchObject({ id: runId, direction: "inbound", status: "in_progress", phone_number: CALLING, from_number: CALLER, workflow_id: agentId });
    expect(run.provider_call_id).toBe(sid);
    expect(JSON.parse(run.initial_context)).toMatchObject({ caller_number: CALLING, called_number: CALLER, first_name: "Ada" });

    await listen(callee, 300);
    callee.speak(SURE.samples);
    await listenUntil(callee, () => callee.played.length >= 3);
    callee.hangup();
    expect(await closedWithin(callee)).toMatchObject({ code: 1000, reason: "callee_hangup" });
    const done = await runWhen(s, agentId, runId, (r) => r.status === "completed");
    expect(done).toMatchObject({ direction: "inbound", status: "completed", phone_number: CALLING });
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.turns.slice(0, 2).map((t) => t.text)).toEqual(["Hi Ada!", "Sure, tell me more."]);
    expect(snap.endReason).toBe("callee_hangup");
  });

  it("a forged token is 401 before the socket is accepted, and creates nothing", async () => {
    const { s, number } = await inboundSetup("exotel");
    const { res } = await dialExotel(s, number.inbound_url.replace(/[0-9a-f]{64}$/, "0".repeat(64)));
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ detail: "Invalid inbound token" });
    // Another configuration's token does not open this one.
    const other = await inboundSetup("exotel");
    const crossed = number.inbound_url.replace(/\/inbound-stream\/\d+\//, `/inbound-stream/${other.s.configId}/`);
    expect((await dialExotel(s, crossed)).res.status).toBe(401);
    expect(await runsOf(s.org.id)).toHaveLength(0);
  });

  it("a number without an agent: the socket closed with the reason, no run", async () => {
    const { s, number } = await inboundSetup("exotel");
    expect((await attach(s, null)).status).toBe(200);
    const { callee } = await answered(s, number.inbound_url);
    expect(await closedWithin(callee)).toMatchObject({ code: 1000, reason: "refused: no_agent" });
    expect(await runsOf(s.org.id)).toHaveLength(0);
  });

  it("over the concurrent-call cap: the socket closed as busy, no run", async () => {
    const { s, number } = await inboundSetup("exotel");
    await organizationStub(env, s.org.id).setCap(1);
    await organizationStub(env, s.org.id).acquire({ leaseId: "held", ttlSeconds: 60 });
    const { callee } = await answered(s, number.inbound_url);
    expect(await closedWithin(callee)).toMatchObject({ code: 1000, reason: "busy" });
    expect(await runsOf(s.org.id)).toHaveLength(0);
  });
});
