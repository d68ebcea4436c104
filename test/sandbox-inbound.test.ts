// Inbound calls on the sandbox carrier: attaching an agent to a sandbox number points the number's VoiceUrl at the
// configuration's inbound URL on the simulator's sandbox account (which owns every number asked for); the dashboard's
// "Call this number" (POST …/sandbox-call) makes the simulator dial it, Twilio's signed voice request to that URL; and
// that request, delivered, starts an inbound run with the number's agent that the callee talks to. In the test pool the
// simulator cannot reach edgedial.test itself, so the route reports the call placed but unanswered, and the test
// delivers the simulator's voice request (the one `npm run dev`'s simulator sends by itself).
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { call } from "./helpers";
import { listen, listenUntil, prepareScripted, SURE } from "./calls/conversation-support";
import { DEFINITION, SEATS_DISPOSITIONS } from "./calls/conversation-support";
import { ECHO_WORKER, fetchWorker } from "./calls/media-support";
import { callbackRequest, deliver, setup, sim } from "./calls/support";
import type { Callback } from "../src/dev/simulator/types";
import { type SandboxSetup, sandboxSetup, sandboxStream, simCall } from "./sandbox-support";

const CALLING = "+14155550177";

/** The seats agent attached to the sandbox number. */
async function attached(): Promise<SandboxSetup & { inboundUrl: string; agentId: number }> {
  const s = await sandboxSetup();
  const wf = await call("POST", "/api/v1/workflow/create", {
    key: s.org.key,
    body: { name: "seats", workflow_definition: DEFINITION, call_disposition_codes: SEATS_DISPOSITIONS, template_context_variables: { first_name: "Ada" } },
  });
  expect(wf.status, wf.text).toBe(200);
  const put = await call("PUT", `/api/v1/organizations/telephony-configs/${s.configId}/phone-numbers/${s.numberId}`, {
    key: s.org.key,
    body: { inbound_workflow_id: wf.json.id },
  });
  expect(put.status, put.text).toBe(200);
  return { ...s, inboundUrl: put.json.inbound_url, agentId: wf.json.id };
}

const placeCall = (s: SandboxSetup, body?: unknown) =>
  call("POST", `/api/v1/organizations/telephony-configs/${s.configId}/phone-numbers/${s.numberId}/sandbox-call`, { key: s.org.key, body });

describe("sandbox: inbound calls", () => {
  it("attaching an agent points the number's VoiceUrl at the inbound URL on the simulator's sandbox account", async () => {
    const s = await attached();
    expect(s.inboundUrl).toMatch(new RegExp(`/api/v1/telephony/sandbox/inbound/${s.configId}/[0-9a-f]{64}$`));
    const numbers = await sim<{ phone_number: string; voice_url: string; status_callback: string }[]>("GET", "/accounts/sandbox/numbers");
    expect(numbers.find((n) => n.phone_number === s.number)).toMatchObject({ voice_url: s.inboundUrl, status_callback: s.inboundUrl });
  });

  it("'Call this number': the simulator dials the number with Twilio's voice request to its inbound URL", async () => {
    const s = await attached();
    const res = await placeCall(s, { from: CALLING });
    expect(res.status, res.text).toBe(200);
    // The test pool's simulator cannot reach edgedial.test: placed, not answered (npm run dev's is, and run_id is set).
    expect(res.json).toMatchObject({ call_id: expect.stringMatching(/^CA[0-9a-f]{32}$/), to: s.number, from: CALLING, answered: false, run_id: null });
    const placed = await simCall(res.json.call_id);
    expect(placed).toMatchObject({ to: s.number, from: CALLING, answerUrl: s.inboundUrl, extra: { direction: "inbound" } });
    // The default caller, and no body at all.
    expect((await placeCall(s)).json.from).toBe("+14155550100");
  });

  it("the voice request starts an inbound run with the number's agent; the callee talks to it; the run records it", async () => {
    const s = await attached();
    const { callback } = await sim<{ callback: Callback }>("POST", "/accounts/sandbox/inbound", { to: s.number, from: CALLING });
    const answer = await fetchWorker(callbackRequest(callback), ECHO_WORKER);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).toContain("<Connect><Stream url=");
    const runs = (await call("GET", `/api/v1/workflow/${s.agentId}/runs?direction=inbound`, { key: s.org.key })).json.items;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ direction: "inbound", phone_number: CALLING });
    const runId = runs[0].id as number;
    await prepareScripted(runId);
    const callee = await sandboxStream(runId);
    await listenUntil(callee, () => callee.played.length >= 1);
    await listen(callee, 300);
    callee.speak(SURE.samples);
    await listenUntil(callee, () => callee.played.length >= 3);
    callee.hangup();
    // Twilio's completed status to the number's StatusCallback (the inbound URL) ends the run.
    const { callbacks } = await sim<{ callbacks: Callback[] }>("POST", `/calls/${encodeURIComponent(runs[0].provider_call_id)}/outcome`, {
      outcome: "answered",
    });
    for (const cb of callbacks.filter((c) => c.kind === "status")) expect((await deliver(cb)).status).toBeLessThan(300);
    const run = (await call("GET", `/api/v1/workflow/${s.agentId}/runs/${runId}`, { key: s.org.key })).json;
    expect(run).toMatchObject({ direction: "inbound", status: "completed", provider: "sandbox", phone_number: CALLING });
  });

  it("is refused off local development (404), for another carrier's number (409) and for a bad caller (422)", async () => {
    const s = await attached();
    const deployed = { ...env, LOCAL_DEV: "" } as unknown as Env;
    const path = `/api/v1/organizations/telephony-configs/${s.configId}/phone-numbers/${s.numberId}/sandbox-call`;
    const off = await worker.fetch(
      new Request(`http://edgedial.test${path}`, { method: "POST", headers: { "X-API-Key": s.org.key, "Content-Type": "application/json" }, body: "{}" }),
      deployed,
      createExecutionContext(),
    );
    expect(off.status).toBe(404);
    expect(((await placeCall(s, { from: "0800" })) as { status: number }).status).toBe(422);
    const twilio = await setup("twilio", {}, s.org);
    const nums = await call("GET", `/api/v1/organizations/telephony-configs/${twilio.configId}/phone-numbers`, { key: s.org.key });
    const other = await call("POST", `/api/v1/organizations/telephony-configs/${twilio.configId}/phone-numbers/${nums.json.items[0].id}/sandbox-call`, {
      key: s.org.key,
      body: {},
    });
    expect(other.status, other.text).toBe(409);
    expect(other.json.detail).toMatch(/sandbox/);
  });
});
