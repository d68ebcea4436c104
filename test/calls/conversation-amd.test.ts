// The carrier's answering-machine verdict arriving while the call runs (Telnyx reports it in its own webhook, after
// call.answered): the call session's agent hears it and ends the call as voicemail. Once the callee has spoken, the
// agent's own judgment stands and a late verdict changes nothing.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import worker from "../../src/index";
import { conversationCall, listenUntil, SURE } from "./conversation-support";
import { play, runRow, setup, type Setup } from "./support";

// The Worker as deployed: answered calls run the conversation agent.
const live = { ...env, VOICE_AGENT: "conversation" } as Env;

async function telnyxConversation(s: Setup) {
  const c = await conversationCall(s, undefined, { provider: "telnyx" });
  return { ...c, callId: (await runRow(c.runId)).providerCallId! };
}

/** Telnyx's webhooks for a call it answered and judged a machine, delivered to the deployed Worker. */
async function deliverVerdict(callId: string) {
  for (const cb of (await play(callId, "voicemail")).filter((c) => c.kind === "status")) {
    const ctx = createExecutionContext();
    const res = await worker.fetch(new Request(cb.url, { method: cb.method, headers: cb.headers, body: cb.body }), live, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBeLessThan(300);
  }
}

describe("a machine verdict that arrives during the call", () => {
  it("while the greeting plays: the agent stops and the call ends as voicemail", async () => {
    const s = await setup("telnyx");
    const { runId, callee, callId } = await telnyxConversation(s);
    await listenUntil(callee, () => callee.received.length >= 5);
    await deliverVerdict(callId);
    await listenUntil(callee, () => callee.closed !== null, 5000);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("voicemail");
    expect(snap.turns.filter((t) => t.role === "callee")).toEqual([]);
    expect((await runRow(runId)).answeredBy).toBe("machine");
  });

  it("after the callee spoke: the conversation goes on", async () => {
    const s = await setup("telnyx");
    const { runId, callee, callId } = await telnyxConversation(s);
    await listenUntil(callee, () => callee.played.length >= 1);
    callee.speak(SURE.samples);
    await listenUntil(callee, () => callee.played.length >= 3);
    await deliverVerdict(callId);
    await listenUntil(callee, () => false, 1000);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.ended).toBe(false);
    expect(snap.turns.map((t) => t.text)).toEqual(["Hi Ada!", "Sure, tell me more.", "Great. How many seats do you need?"]);
  });
});
