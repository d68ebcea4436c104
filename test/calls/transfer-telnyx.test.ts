// Telnyx hands a live call to a person (Call Control v2), driven as Telnyx drives it: the deployed Worker answers the
// simulator's signed webhooks, the callee talks on the stream, the conversation agent reaches a transferCall node.
// Cold: the `transfer` command on the caller's call (the body the telnyx SDK sends), the run ends `transferred`.
// Warm: the person's leg dialed, on its answer the whisper WAV played to it, on playback's end the two bridged and our
// stream stopped; a leg nobody answers is no_answer and the agent goes on along the no-answer edge.
import Telnyx from "telnyx";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import type { Callback } from "../../src/dev/simulator/types";
import { coldTransferBody, warmDialBody } from "../../src/telephony/providers/telnyx/transfer";
import type { ConfigContext, TransferLeg } from "../../src/telephony/providers/types";
import { listenUntil, prepareScripted, SURE } from "./conversation-support";
import { calleeAt, deliverLive, hearAgent, liveFetch, say, simCall, untilAnswered } from "./resume-support";
import { CALLEE, flush, play, runRow, setup, sim, simRequests, type Setup } from "./support";
import { TRANSFER_SCRIPT, transferDefinition } from "./transfer-support";

const PERSON = "+14155550199";
const definition = (mode: "cold" | "warm") => transferDefinition(PERSON, mode);
const SCRIPT = TRANSFER_SCRIPT;

/** The transfer agent's Telnyx call, answered by the deployed Worker, the callee on its stream, the greeting heard. */
async function answeredCall(mode: "cold" | "warm") {
  const s = await setup("telnyx");
  const post = (path: string, body: unknown) =>
    liveFetch(
      new Request(`http://edgedial.test/api/v1${path}`, {
        method: "POST",
        headers: { "X-API-Key": s.org.key, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
  const wf = await post("/workflow/create", { name: "transfer", workflow_definition: definition(mode) });
  expect(wf.status, wf.text).toBe(200);
  const started = await post(`/public/agent/${JSON.parse(wf.text).workflow_uuid}`, { phone_number: CALLEE, initial_context: { first_name: "Ada" } });
  expect(started.status, started.text).toBe(200);
  const runId = JSON.parse(started.text).workflow_run_id as number;
  await prepareScripted(runId, SCRIPT as never);
  const callId = (await runRow(runId)).providerCallId!;
  for (const cb of await untilAnswered(callId, "telnyx")) await deliverLive(cb);
  const callee = await calleeAt("telnyx", runId, callId, String((await simCall(callId)).streamUrl));
  await hearAgent(callee);
  return { s, runId, callId, callee, agentId: JSON.parse(wf.text).id as number };
}

type Call = Awaited<ReturnType<typeof answeredCall>>;
const commands = async (s: Setup, name: string) =>
  (await simRequests(s.acct))
    .filter((r) => r.method === "POST" && r.path.endsWith(`/actions/${name}`))
    .map((r) => ({ path: r.path, body: JSON.parse(r.body) }));
const simCalls = (s: Setup) => sim<{ id: string; to: string; statusUrl?: string; extra: Record<string, unknown> }[]>("GET", `/accounts/${s.acct.id}/calls`);
const deliverAll = async (cbs: Callback[]) => {
  for (const cb of cbs) if (cb.kind !== "stream") await deliverLive(cb);
};
const transferOf = async (c: Call) =>
  (await liveFetch(new Request(`http://edgedial.test/api/v1/workflow/${c.agentId}/runs/${c.runId}`, { headers: { "X-API-Key": c.s.org.key } }))).text;

/** The caller asks for a person: the agent says its message, then asks Telnyx. */
async function asksForPerson(c: Call, until: () => Promise<boolean>) {
  say(c.callee, SURE);
  for (let i = 0; i < 750 && !(await until()); i++) await listenUntil(c.callee, () => false, 20);
  expect(await until()).toBe(true);
}

/** What the telnyx SDK sends for a command or a dial (its fetch is ours: nothing leaves the test). */
async function sdkRequest(send: (client: Telnyx) => Promise<unknown>) {
  let sent: { path: string; body: unknown } | null = null;
  const client = new Telnyx({
    apiKey: "KEY-test",
    baseURL: "https://api.telnyx.test/v2",
    maxRetries: 0,
    fetch: (async (url: string | URL | Request, init?: RequestInit) => {
      sent = { path: new URL(String(url)).pathname.replace(/^\/v2/, ""), body: JSON.parse(String(init?.body ?? "null")) };
      return new Response(JSON.stringify({ data: { result: "ok", call_control_id: "v3:x" } }), { headers: { "Content-Type": "application/json" } });
    }) as typeof fetch,
  });
  await send(client);
  return sent!;
}

describe("Telnyx transfer requests against the telnyx SDK", () => {
  const leg: TransferLeg = {
    runId: 7,
    providerCallId: "v3:caller-1",
    to: PERSON,
    from: "+14155550100",
    mode: "cold",
    timeoutSeconds: 3,
    statusUrl: "https://edgedial.example/api/v1/telephony/telnyx/transfer-status/7/tok",
    documentUrl: "https://edgedial.example/api/v1/telephony/telnyx/transfer/7/tok",
  };
  it("cold: the transfer command's body is what calls.actions.transfer sends; the ring time is held to Telnyx's 5..600 s", async () => {
    const ours = coldTransferBody(leg);
    expect(ours.timeout_secs).toBe(5);
    const theirs = await sdkRequest((t) => t.calls.actions.transfer(leg.providerCallId, ours as never));
    expect(theirs).toEqual({ path: "/calls/v3:caller-1/actions/transfer", body: ours });
    expect(atob(String(ours.target_leg_client_state))).toBe("transfer:cold:7");
  });
  it("warm: the person's leg's dial is what calls.dial sends", async () => {
    const ctx = { id: 1, orgId: 1, config: { connection_id: "conn-1" }, state: {}, activeNumbers: [] } as ConfigContext;
    const ours = warmDialBody(ctx, { ...leg, mode: "warm", timeoutSeconds: 20 });
    const theirs = await sdkRequest((t) => t.calls.dial(ours as never));
    expect(theirs).toEqual({ path: "/calls", body: ours });
    expect(ours).toMatchObject({ connection_id: "conn-1", to: PERSON, timeout_secs: 20, webhook_url: leg.statusUrl });
  });
  it("the whisper, bridge and streaming_stop commands match calls.actions.startPlayback, bridge and stopStreaming", async () => {
    for (const [name, body, send] of [
      ["playback_start", { audio_url: "https://x.test/w.wav", command_id: "whisper-7" }, (t: Telnyx, b: never) => t.calls.actions.startPlayback("v3:p", b)],
      [
        "bridge",
        { call_control_id: "v3:p", command_id: "bridge-7" },
        (t: Telnyx) => t.calls.actions.bridge("v3:c", { call_control_id_to_bridge_with: "v3:p", command_id: "bridge-7" }),
      ],
      ["streaming_stop", {}, (t: Telnyx, b: never) => t.calls.actions.stopStreaming("v3:p", b)],
    ] as const) {
      const target = name === "bridge" ? "v3:c" : "v3:p";
      expect(await sdkRequest((t) => send(t, body as never))).toEqual({ path: `/calls/${target}/actions/${name}`, body });
    }
  });
});

describe("Telnyx: transfer to a person on a live call", () => {
  it("cold: the transfer command on the caller's call; the run ends transferred and records it", async () => {
    const c = await answeredCall("cold");
    await asksForPerson(c, async () => (await commands(c.s, "transfer")).length > 0);
    const [transfer] = await commands(c.s, "transfer");
    expect(transfer.path).toBe(`/v2/calls/${c.callId}/actions/transfer`);
    expect(transfer.body).toEqual({
      to: PERSON,
      from: "+14155550100",
      timeout_secs: 20,
      webhook_url: expect.stringMatching(new RegExp(`/api/v1/telephony/telnyx/transfer-status/${c.runId}/[^/]+$`)),
      webhook_url_method: "POST",
      target_leg_client_state: btoa(`transfer:cold:${c.runId}`),
    });
    await listenUntil(c.callee, () => c.callee.closed !== null, 5000);
    expect((await callSessionStub(env, c.runId).snapshot()).endReason).toBe("transferred");
    expect(JSON.parse(await transferOf(c)).transfer).toMatchObject({ destination: PERSON, mode: "cold", outcome: "connected" });
    // Telnyx placed the person's leg, reporting to the transfer's status URL with the state we gave it.
    const personLeg = (await simCalls(c.s)).find((x) => x.extra.transferOf === c.callId)!;
    expect(personLeg).toMatchObject({ to: PERSON, statusUrl: transfer.body.webhook_url });
    // Edgedial never hung the caller up.
    expect(await commands(c.s, "hangup")).toEqual([]);
  });

  it("cold, nobody answers: the settled transfer's later report still hangs the caller up (no silent line); the outcome stands", async () => {
    const c = await answeredCall("cold");
    await asksForPerson(c, async () => (await commands(c.s, "transfer")).length > 0);
    await listenUntil(c.callee, () => c.callee.closed !== null, 5000);
    const personLeg = (await simCalls(c.s)).find((x) => x.extra.transferOf === c.callId)!;
    // Telnyx rings the person for timeout_secs; nobody picks up: the leg's call.hangup (timeout) at the transfer's status URL.
    await deliverAll(await play(personLeg.id, "no_answer"));
    expect((await commands(c.s, "hangup")).map((x) => x.path)).toEqual([`/v2/calls/${c.callId}/actions/hangup`]);
    expect((await simCall(c.callId)) as unknown).toMatchObject({ state: "ended" });
    // Settled once: still connected (edgedial left the call at the hand-over), the message says what followed.
    expect(JSON.parse(await transferOf(c)).transfer).toMatchObject({
      mode: "cold",
      outcome: "connected",
      message: expect.stringMatching(/^After the hand-over: The person's phone: timeout \(SIP 480\)$/),
    });
    expect((await callSessionStub(env, c.runId).snapshot()).endReason).toBe("transferred");
  });

  it("warm: the person's leg dialed, the whisper WAV played to it on answer, then bridged with the caller and our stream stopped", async () => {
    const c = await answeredCall("warm");
    const personLeg = async () => (await simCalls(c.s)).find((x) => x.to === PERSON);
    await asksForPerson(c, async () => (await personLeg()) !== undefined);
    const person = (await personLeg())!;
    expect(person.statusUrl).toMatch(new RegExp(`/transfer-status/${c.runId}/`));
    // The caller is still with the agent while the person's phone rings.
    expect(c.callee.closed).toBeNull();
    await deliverAll(await play(person.id, "answered"));
    const [whisper] = await commands(c.s, "playback_start");
    expect(whisper.path).toBe(`/v2/calls/${person.id}/actions/playback_start`);
    const wav = await exports.default.fetch(new Request(whisper.body.audio_url));
    expect(wav.status).toBe(200);
    expect(new TextDecoder().decode((await wav.arrayBuffer()).slice(0, 4))).toBe("RIFF");
    await deliverAll(await flush(person.id));
    const [bridge] = await commands(c.s, "bridge");
    expect(bridge).toEqual({ path: `/v2/calls/${c.callId}/actions/bridge`, body: { call_control_id: person.id, command_id: `bridge-${c.runId}` } });
    expect((await commands(c.s, "streaming_stop")).map((x) => x.path)).toEqual([`/v2/calls/${c.callId}/actions/streaming_stop`]);
    expect((await simCall(c.callId)) as unknown).toMatchObject({ extra: { bridgedWith: person.id } });
    await listenUntil(c.callee, () => c.callee.closed !== null, 5000);
    expect((await callSessionStub(env, c.runId).snapshot()).endReason).toBe("transferred");
    expect(JSON.parse(await transferOf(c)).transfer).toMatchObject({ mode: "warm", outcome: "connected" });
  });

  it("warm, nobody answers: no_answer, the caller stays with the agent, who goes on along the no-answer edge", async () => {
    const c = await answeredCall("warm");
    const personLeg = async () => (await simCalls(c.s)).find((x) => x.to === PERSON);
    await asksForPerson(c, async () => (await personLeg()) !== undefined);
    await deliverAll(await play((await personLeg())!.id, "no_answer"));
    expect(JSON.parse(await transferOf(c)).transfer).toMatchObject({ mode: "warm", outcome: "no_answer", message: expect.stringContaining("timeout") });
    await listenUntil(c.callee, () => c.callee.closed !== null, 15_000);
    const snap = await callSessionStub(env, c.runId).snapshot();
    expect(snap.endReason).toBe("agent_hangup");
    // The caller was told, and the agent followed the no-answer edge (its goodbye), on the same media.
    expect(snap.turns.find((t) => t.role === "tool")?.text).toMatch(/^transfer_call: error .*no_answer$/);
    expect(snap.turns.at(-1)?.text).toMatch(/nobody was able to pick up.*Sorry, nobody is free\. Goodbye!$/);
    expect(await commands(c.s, "bridge")).toEqual([]);
  });
});
