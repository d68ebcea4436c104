// The conversation agent itself acting on a live Twilio call through the simulator (no test agent): the scripted
// model takes the edge into a transferCall node, the caller hears the node's message, then Twilio is asked to move the
// call to the person (cold) and the run ends `transferred`; and a definition's key edge (`data.dtmf`) taken when the
// simulated callee presses the key on the stream, the graph moving without the model choosing.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ScriptStep } from "../../src/agent/scripted-model";
import { callSessionStub } from "../../src/calls/session/stub";
import { call } from "../helpers";
import { listenLive, listenUntil, prepareScripted, runWhen, SURE } from "./conversation-support";
import { connect } from "./media-support";
import { CALLER, runRow, setup, simRequests, startCall } from "./support";
import { form, PERSON } from "./transfer-support";

async function liveCall(definition: unknown, script: ScriptStep[]) {
  const s = await setup("twilio");
  const wf = await call("POST", "/api/v1/workflow/create", { key: s.org.key, body: { name: "actions", workflow_definition: definition } });
  expect(wf.status, wf.text).toBe(200);
  const runId = await startCall({ ...s, agent: wf.json });
  await prepareScripted(runId, script);
  const callee = await connect("twilio", runId);
  // The greeting plays first.
  await listenUntil(callee, () => callee.played.length >= 1);
  return { s, agentId: wf.json.id as number, runId, callee };
}
const texts = (run: any): string[] => run.transcript.map((t: any) => `${t.role}: ${t.text}`);

describe("the conversation agent transfers the caller (Twilio, cold)", () => {
  const definition = {
    nodes: [
      { id: "start", type: "startCall", data: { prompt: "Ask {{first_name}} whether they want to talk to a person.", greeting: "Hi {{first_name}}!" } },
      { id: "xfer", type: "transferCall", data: { destination: PERSON, mode: "cold", message: "Putting you through to our sales team.", timeout_seconds: 25 } },
      { id: "bye", type: "endCall", data: { prompt: "Apologize that nobody is free and say goodbye." } },
    ],
    edges: [
      { id: "e1", source: "start", target: "xfer", data: { label: "transfer", condition: "They want a person" } },
      { id: "e2", source: "xfer", target: "bye", data: { label: "nobody", condition: "Nobody answered", on: "no_answer" } },
    ],
  };

  it("reaching the transferCall node: the caller hears its message, then the live call is updated with <Dial>; the run ends transferred", async () => {
    const { s, agentId, runId, callee } = await liveCall(definition, [{ user: "tell me more", prompt: "whether they want", call: { name: "transfer" } }]);
    const sid = (await runRow(runId)).providerCallId!;
    const updates = async () => (await simRequests(s.acct)).filter((r) => r.path.endsWith(`/Calls/${sid}.json`));
    callee.speak(SURE.samples);
    await listenLive(callee, () => callee.closed !== null);
    // The greeting and the message were both played out to the caller (their marks echoed) before the stream ended.
    expect(callee.closed).not.toBeNull();
    expect(callee.played.length).toBeGreaterThanOrEqual(2);
    expect(callee.unplayedMs).toBe(0);
    // One update of the caller's call, the documented <Dial> (no hang-up: Twilio carries the caller to the person).
    expect((await updates()).map((r) => form(r.body))).toEqual([
      {
        Twiml: `<?xml version="1.0" encoding="UTF-8"?><Response><Dial callerId="${CALLER}" timeout="25"><Number>${PERSON}</Number></Dial></Response>`,
      },
    ]);
    expect((await callSessionStub(env, runId).snapshot()).endReason).toBe("transferred");
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length && r.transfer?.outcome != null);
    expect(run.end_reason).toBe("transferred");
    expect(run.transfer).toMatchObject({ destination: PERSON, mode: "cold", requested_mode: "cold", outcome: "connected" });
    // The message, then the transfer's tool turn, and nothing after it (the message was heard in full before Twilio
    // moved the call: its mark came back and no audio was left unplayed when the stream ended, above).
    const t = texts(run);
    expect(t.slice(0, 2)).toEqual(["agent: Hi Ada!", "callee: Sure, tell me more."]);
    expect(t.at(-2)).toBe("agent: Putting you through to our sales team.");
    expect(t.at(-1)).toMatch(/^tool: transfer_call: ok \(\d+ ms\)/);
  });
});

describe("a key edge of the conversation agent's definition (Twilio)", () => {
  const definition = {
    nodes: [
      { id: "start", type: "startCall", data: { prompt: "Ask {{first_name}} to press 1 for billing or 2 for support.", greeting: "Hi {{first_name}}!" } },
      { id: "billing", type: "endCall", data: { prompt: "Say billing will call back, and goodbye." } },
      { id: "support", type: "endCall", data: { prompt: "Say support will call back, and goodbye." } },
    ],
    edges: [
      { id: "e1", source: "start", target: "billing", data: { label: "billing", condition: "They want billing", dtmf: "1" } },
      { id: "e2", source: "start", target: "support", data: { label: "support", condition: "They want support", dtmf: "2" } },
    ],
  };
  const SCRIPT: ScriptStep[] = [
    { prompt: "billing will call back", say: "Billing will call you back. Goodbye!", call: { name: "end_call" } },
    { prompt: "support will call back", say: "Support will call you back. Goodbye!", call: { name: "end_call" } },
  ];

  it("the callee presses 2 on the stream: the agent moves along the key's edge without asking the model, and answers at the new node", async () => {
    const { s, agentId, runId, callee } = await liveCall(definition, SCRIPT);
    // Twilio's `dtmf` message on the stream, as the simulated carrier reports a key the callee pressed.
    callee.press("2");
    await listenLive(callee, () => callee.closed !== null);
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length);
    expect(run.end_reason).toBe("agent_hangup");
    expect(texts(run)).toEqual(["agent: Hi Ada!", "callee: [pressed 2]", "agent: Support will call you back. Goodbye!"]);
    // The graph moved by the key: the model was asked only at the support node (asked at the start node, the script
    // has no step there and would have said its fallback).
    expect((await callSessionStub(env, runId).snapshot()).endReason).toBe("agent_hangup");
  });
});
