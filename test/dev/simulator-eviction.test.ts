// The carrier simulator keeps its state in its Durable Object's storage, not in memory: the local runtime evicts an
// idle object after ~10 s (and a busy machine makes that happen mid-test), and an evicted simulator must still know
// its accounts, calls, recorded requests, numbers and queued faults. Open sockets (ARI's events) cannot survive.
// abortAllDurableObjects restarts every object of the runtime, the simulator's auxiliary Worker's included (the
// per-stub eviction reaches only this Worker's own namespaces); without the storage this fails with Twilio's 401.
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call } from "../helpers";
import { CALLEE, deliverAll, drain, play, runApi, runRow, setup, sim, simFault, simRequests, startCall } from "../calls/support";

describe("the simulator evicted between a call's start and its next request", () => {
  it("still knows the account, the call, its recorded requests, numbers and the faults left", async () => {
    const s = await setup("twilio");
    await sim("POST", `/accounts/${s.acct.id}/numbers`, { number: "+14155550111" });
    // Two refusals queued (a 4xx: not retried); the first is taken before the eviction, the second after.
    await simFault(s.acct, "originate", 400, "The 'To' number is not a valid phone number.", 2);
    const refused = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: s.org.key,
      body: { phone_number: CALLEE, initial_context: { first_name: "Ada" } },
    });
    expect(refused.status, refused.text).toBeGreaterThanOrEqual(400);
    const before = await simRequests(s.acct);

    await abortAllDurableObjects();

    const again = await call("POST", `/api/v1/public/agent/${s.agent.workflow_uuid}`, {
      key: s.org.key,
      body: { phone_number: CALLEE, initial_context: { first_name: "Ada" } },
    });
    expect(again.status, "the second queued fault survived").toBe(refused.status);

    const runId = await startCall(s);
    const callId = (await runApi(s, runId)).provider_call_id as string;
    expect(callId).toMatch(/^CA/);

    await abortAllDurableObjects();

    // The account answers (no 404 "no such account"), with every request it recorded before.
    const after = await simRequests(s.acct);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.length).toBeGreaterThan(before.length);
    const numbers = await sim<{ phone_number: string }[]>("GET", `/accounts/${s.acct.id}/numbers`);
    expect(numbers.map((n) => n.phone_number)).toContain("+14155550111");
    const calls = await sim<{ id: string; to: string }[]>("GET", `/accounts/${s.acct.id}/calls`);
    expect(calls.map((c) => c.id)).toContain(callId);

    // The call plays on: its signed callbacks are accepted and the run completes.
    await deliverAll(await play(callId, "answered"));
    expect((await runRow(runId)).status).toBe("completed");
    const view = await sim<{ state: string; to: string }>("GET", `/calls/${encodeURIComponent(callId)}`);
    expect(view).toMatchObject({ to: CALLEE });

    // And a hang-up through the API after another eviction reaches the call (its state and pending callbacks kept).
    await abortAllDurableObjects();
    expect((await sim<{ state: string }>("GET", `/calls/${encodeURIComponent(callId)}`)).state).toBe(view.state);
  });

  // Telnyx signs its webhooks with an Ed25519 key, Vonage its callbacks' JWT with an RSA key: both kept as JWK.
  for (const provider of ["telnyx", "vonage"] as const) {
    it(`${provider}: the account's signing keys survive, so the callbacks after a restart still verify`, async () => {
      const s = await setup(provider);
      const runId = await startCall(s);
      const callId = (await runApi(s, runId)).provider_call_id as string;
      await abortAllDurableObjects();
      await deliverAll(await play(callId, "answered"));
      // What the carrier sends in reaction to our commands (Telnyx's hang-up webhook), signed after the restart too.
      await drain(callId);
      expect((await runRow(runId)).status).toBe("completed");
    });
  }
});
