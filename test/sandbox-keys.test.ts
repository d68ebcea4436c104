// Key presses on the sandbox carrier: the callee of a sandbox call presses keys on the call's media stream as Twilio
// reports them (a `dtmf` message per key), and the agent hears each once; the live call page's keypad (POST
// …/runs/{run_id}/sandbox-keys) asks the simulator's callee to press them on its own stream. In the test pool the
// simulator's callee has no stream (it cannot reach edgedial.test), so the route answers 409 here, as it does for a
// call that is not live; the test is the callee on the stream instead.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { callSessionStub } from "../src/calls/session/stub";
import { call } from "./helpers";
import { eventually, setup, startCall } from "./calls/support";
import { sandboxCall, sandboxSetup, simCall } from "./sandbox-support";

const press = (s: { org: { key: string }; agent: { id: number } }, runId: number, digits: unknown) =>
  call("POST", `/api/v1/workflow/${s.agent.id}/runs/${runId}/sandbox-keys`, { key: s.org.key, body: { digits } });

describe("sandbox: key presses", () => {
  it("keys pressed on the sandbox call's stream (Twilio's dtmf messages) reach the agent, each once, and the run records them", async () => {
    const s = await sandboxSetup();
    const { runId, callee } = await sandboxCall(s, "keypad");
    callee.silence(100);
    callee.press("1#");
    callee.silence(100);
    const turns = await eventually(
      async () => (await callSessionStub(env, runId).snapshot()).turns.map((t) => t.text),
      (t) => t.includes("key #"),
    );
    expect(turns.filter((t) => t.startsWith("key "))).toEqual(["key 1", "key #"]);
  });

  it("the keypad route asks the simulator's callee to press; 409 while the simulator has no live stream for the call", async () => {
    const s = await sandboxSetup();
    const { runId, callId } = await sandboxCall(s, "keypad");
    const res = await press(s, runId, "12");
    expect(res.status, res.text).toBe(409);
    expect(res.json.detail).toMatch(/no live audio in the simulator/);
    expect((await simCall(callId)).extra.pressed).toBeUndefined();
  });

  it("refuses keys that are not keys (422), another carrier's run (409), an unknown run (404), and off local development (404)", async () => {
    const s = await sandboxSetup();
    const { runId } = await sandboxCall(s, "keypad");
    for (const digits of ["", "12x", "1".repeat(33), 5]) expect((await press(s, runId, digits)).status).toBe(422);
    expect((await press(s, runId + 100000, "1")).status).toBe(404);
    const twilio = await setup("twilio");
    const other = await startCall(twilio);
    const refused = await press(twilio, other, "1");
    expect(refused.status, refused.text).toBe(409);
    const off = await worker.fetch(
      new Request(`http://edgedial.test/api/v1/workflow/${s.agent.id}/runs/${runId}/sandbox-keys`, {
        method: "POST",
        headers: { "X-API-Key": s.org.key, "Content-Type": "application/json" },
        body: JSON.stringify({ digits: "1" }),
      }),
      { ...env, LOCAL_DEV: "" } as unknown as Env,
      createExecutionContext(),
    );
    expect(off.status).toBe(404);
  });
});
