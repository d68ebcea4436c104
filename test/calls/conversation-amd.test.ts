// The carrier's answering-machine verdict arriving while the call runs (Telnyx reports it in its own webhook, after
// call.answered): the call session's agent hears it and ends the call as voicemail. Once the callee has spoken, the
// agent's own judgment stands and a late verdict changes nothing.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import type { KnownClip } from "../../src/calls/agent/clip-speech";
import type { ScriptStep } from "../../src/calls/agent/scripted-model";
import { callSessionStub } from "../../src/calls/session/stub";
import type { CalleeStream } from "../../src/dev/simulator/media/callee";
import worker from "../../src/index";
import type { SampleRate } from "../../src/lib/audio/resample";
import { readWav } from "../../src/lib/audio/wav";
import seats from "../fixtures/seats-agent.json";
import { call } from "../helpers";
import { connect } from "./media-support";
import { CALLEE, play, runRow, setup, type Setup } from "./support";

const SURE = (() => {
  const w = readWav(Uint8Array.from(atob(inject("audioClips")["callee-sure-8k.wav"]), (c) => c.charCodeAt(0)));
  return { text: "Sure, tell me more.", samples: w.samples, rate: w.rate as SampleRate } satisfies KnownClip;
})();
// The Worker as deployed: answered calls run the conversation agent.
const live = { ...env, VOICE_AGENT: "conversation" } as Env;

async function telnyxConversation(s: Setup): Promise<{ runId: number; callee: CalleeStream; callId: string }> {
  const wf = await call("POST", "/api/v1/workflow/create", { key: s.org.key, body: { name: "seats", workflow_definition: seats.definition } });
  expect(wf.status, wf.text).toBe(200);
  const res = await call("POST", `/api/v1/public/agent/${wf.json.workflow_uuid}`, {
    key: s.org.key,
    body: { phone_number: CALLEE, initial_context: { first_name: "Ada" } },
  });
  expect(res.status, res.text).toBe(200);
  const runId = res.json.workflow_run_id as number;
  await callSessionStub(env, runId).prepare({ agent: "conversation", scripted: { script: seats.script as ScriptStep[], clips: [SURE], ttsFailsOn: [] } });
  const callee = await connect("telnyx", runId);
  return { runId, callee, callId: (await runRow(runId)).providerCallId! };
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

async function listenUntil(callee: CalleeStream, done: () => boolean, maxMs = 20_000) {
  for (let t = 0; t < maxMs && !callee.closed && !done(); t += 20) {
    callee.silence(20);
    await new Promise((r) => setTimeout(r, 0));
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
    await listenUntil(callee, () => callee.marks.length >= 1);
    callee.speak(SURE.samples);
    await listenUntil(callee, () => callee.marks.length >= 3);
    await deliverVerdict(callId);
    await listenUntil(callee, () => false, 1000);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.ended).toBe(false);
    expect(snap.turns.map((t) => t.text)).toEqual(["Hi Ada!", "Sure, tell me more.", "Great. How many seats do you need?"]);
  });
});
