// Cold transfer on the carriers whose hand-over is one request (Plivo's and Vobiz's Transfer API, Vonage's transfer of
// the call to an NCCO), through the simulator on a live call: the carrier receives the documented request, fetches
// what it was pointed at (signed, as the carrier would), the run ends `transferred` with its record, the caller is not
// hung up. And the carriers without a live-call transfer (Exotel, Cloudonix): `unsupported`, the call goes on.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import type { ProviderName } from "../../src/telephony/providers/types";
import { TRANSFER_LINES } from "../../src/agent/turn";
import { call } from "../helpers";
import { listen, listenLive, listenUntil, prepareScripted, SURE } from "./conversation-support";
import { connect } from "./media-support";
import { CALLER, deliver, flush, runApi, runRow, setup, simRequests, startCall } from "./support";
import { outcomeOf, PERSON, runOnceEnded, transferCall } from "./transfer-support";

const digits = (n: string) => n.replace(/^\+/, "");

describe.each([
  ["plivo", "/v1/Account/"],
  ["vobiz", "/api/v1/Account/"],
] as const)("%s: cold transfer through the Transfer API", (provider, prefix) => {
  it("POST …/Call/{uuid}/ with legs=aleg and aleg_url; the signed fetch of aleg_url dials the person; the run ends transferred", async () => {
    const { s, runId, callee } = await transferCall(provider, { transfer_mode: "cold" }, { pickUp: true });
    const { outcome } = await outcomeOf(runId, callee);
    expect(outcome, JSON.stringify((await runRow(runId)).transfer)).toBe("connected");
    expect((await callSessionStub(env, runId).snapshot()).endReason).toBe("transferred");
    const uuid = (await runRow(runId)).providerCallId!;
    const sent = (await simRequests(s.acct)).filter((r) => r.path === `${prefix}${s.acct.credentials.auth_id}/Call/${uuid}/`);
    // One request: the transfer (no DELETE: edgedial does not hang the caller up).
    expect(sent.map((r) => r.method)).toEqual(["POST"]);
    const body = JSON.parse(sent[0].body);
    expect(body).toEqual({ legs: "aleg", aleg_url: expect.any(String), aleg_method: "POST" });
    expect(body.aleg_url).toMatch(new RegExp(`/api/v1/telephony/${provider}/transfer/${runId}/[0-9a-f]{64}$`));

    // The carrier fetches the new XML at aleg_url, signed as every callback, Event=Transfer.
    const fetches = (await flush(uuid)).filter((c) => c.url === body.aleg_url);
    expect(fetches).toHaveLength(1);
    expect(new URLSearchParams(fetches[0].body).get("Event")).toBe("Transfer");
    const doc = await deliver(fetches[0]);
    expect(doc.status, doc.text).toBe(200);
    expect(doc.headers.get("content-type")).toBe("application/xml");
    expect(doc.text).toBe(
      `<?xml version="1.0" encoding="UTF-8"?><Response><Dial callerId="${digits(CALLER)}" timeout="20"><Number>${digits(PERSON)}</Number></Dial></Response>`,
    );
    // Unsigned, or with a forged signature: refused.
    const forged = Object.fromEntries(
      Object.keys(fetches[0].headers)
        .filter((h) => /signature(-v\d)?$/i.test(h))
        .map((h) => [h, "Zm9yZ2Vk"]),
    );
    expect((await deliver(fetches[0], { headers: forged })).status).toBe(403);

    const run = await runOnceEnded(s, runId);
    expect(run.end_reason).toBe("transferred");
    expect(run.transfer).toEqual({
      destination: PERSON,
      mode: "cold",
      requested_mode: "cold",
      requested_at: expect.any(String),
      outcome: "connected",
      outcome_at: expect.any(String),
      message: null,
    });
  });

  it("warm asked: falls back to cold (the caller still reaches the person, without a whisper)", async () => {
    const { s, runId, callee } = await transferCall(provider, { transfer_mode: "warm" }, { pickUp: true });
    expect((await outcomeOf(runId, callee)).outcome).toBe("connected");
    const run = await runOnceEnded(s, runId);
    expect(run.transfer).toMatchObject({ mode: "cold", requested_mode: "warm", outcome: "connected" });
  });
});

describe("Vonage: cold transfer to an inline NCCO", () => {
  it("PUT /v1/calls/{uuid} with action transfer and a connect NCCO, under the application JWT; the run ends transferred", async () => {
    const { s, runId, callee } = await transferCall("vonage", { transfer_mode: "warm" }, { pickUp: true });
    const { outcome } = await outcomeOf(runId, callee);
    expect(outcome, JSON.stringify((await runRow(runId)).transfer)).toBe("connected");
    expect((await callSessionStub(env, runId).snapshot()).endReason).toBe("transferred");
    const uuid = (await runRow(runId)).providerCallId!;
    const sent = (await simRequests(s.acct)).filter((r) => r.path === `/v1/calls/${uuid}`);
    // One request: the transfer (no hang-up).
    expect(sent.map((r) => [r.method, JSON.parse(r.body)])).toEqual([
      [
        "PUT",
        {
          action: "transfer",
          destination: {
            type: "ncco",
            ncco: [{ action: "connect", from: digits(CALLER), timeout: 20, endpoint: [{ type: "phone", number: digits(PERSON) }] }],
          },
        },
      ],
    ]);
    expect(sent[0].headers.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    const run = await runOnceEnded(s, runId);
    expect(run.end_reason).toBe("transferred");
    expect(run.transfer).toMatchObject({ destination: PERSON, mode: "cold", requested_mode: "warm", outcome: "connected", message: null });
  });

  it("a call not in progress at Vonage: refused, failed with Vonage's words, the caller stays with the agent", async () => {
    const { s, runId, callee } = await transferCall("vonage", { transfer_mode: "cold" });
    expect((await outcomeOf(runId, callee)).outcome).toBe("failed");
    expect((await runApi(s, runId)).transfer).toMatchObject({ outcome: "failed", message: expect.stringMatching(/^Vonage refused the transfer \(HTTP 400\)/) });
    await listen(callee, 200);
    expect((await callSessionStub(env, runId).snapshot()).ended).toBe(false);
  });
});

/** A carrier without the transfer: `unsupported`, the run says why, nothing sent, the caller stays with the agent. */
async function unsupported(provider: ProviderName, name: string) {
  const { s, runId, callee } = await transferCall(provider, { transfer_mode: "cold" });
  const before = (await simRequests(s.acct)).length;
  expect((await outcomeOf(runId, callee)).outcome).toBe("unsupported");
  expect(await simRequests(s.acct)).toHaveLength(before);
  expect((await runApi(s, runId)).transfer).toMatchObject({ outcome: "failed", message: `${name} offers no cold transfer` });
  await listen(callee, 200);
  expect(callee.closed).toBeNull();
  expect((await callSessionStub(env, runId).snapshot()).ended).toBe(false);
}

/** An agent whose start node hands the caller to a person when they ask (the scripted model takes that edge). */
const definition = {
  nodes: [
    { id: "start", type: "startCall", data: { prompt: "Ask {{first_name}} whether they want to talk to a person.", greeting: "Hi {{first_name}}!" } },
    { id: "xfer", type: "transferCall", data: { destination: PERSON, mode: "cold", message: "Putting you through.", timeout_seconds: 20 } },
    { id: "bye", type: "endCall", data: { prompt: "Apologize that nobody is free and say goodbye." } },
  ],
  edges: [
    { id: "e1", source: "start", target: "xfer", data: { label: "transfer", condition: "They want a person" } },
    { id: "e2", source: "xfer", target: "bye", data: { label: "nobody", condition: "Nobody answered", on: "no_answer" } },
  ],
};

describe("carriers without a live-call transfer", () => {
  it("Exotel: unsupported, the call goes on", () => unsupported("exotel", "Exotel"));
  it("Cloudonix: unsupported, the call goes on", () => unsupported("cloudonix", "Cloudonix"));

  it("Exotel, the conversation agent at a transferCall node: the caller hears that it cannot transfer, never dead air", async () => {
    const s = await setup("exotel");
    const wf = await call("POST", "/api/v1/workflow/create", { key: s.org.key, body: { name: "transfer", workflow_definition: definition } });
    expect(wf.status, wf.text).toBe(200);
    const runId = await startCall({ ...s, agent: wf.json });
    await prepareScripted(runId, [
      { user: "tell me more", prompt: "whether they want", call: { name: "transfer" } },
      { say: "Is there anything else I can help with?" },
    ]);
    const callee = await connect("exotel", runId);
    await listenUntil(callee, () => callee.played.length >= 1);
    callee.speak(SURE.samples);
    const spoken = async () => (await callSessionStub(env, runId).snapshot()).turns.some((t) => t.text.includes(TRANSFER_LINES.unsupported));
    for (let i = 0; i < 100 && !(await spoken()); i++) await listenLive(callee, () => false, 200);
    // The node's message, the tool's answer, then the line and the conversation going on, with no gap between.
    const turns = (await callSessionStub(env, runId).snapshot()).turns;
    const tool = turns.findIndex((t) => t.role === "tool");
    expect(turns[tool].text).toMatch(/^transfer_call: error \(\d+ ms\): unsupported$/);
    expect(turns[tool - 1]).toMatchObject({ role: "agent", text: "Putting you through." });
    expect(turns[tool + 1]).toMatchObject({ role: "agent", text: `${TRANSFER_LINES.unsupported} Is there anything else I can help with?` });
    expect(turns[tool + 1].startMs).toBe(turns[tool - 1].endMs);
    expect((await callSessionStub(env, runId).snapshot()).endReason).not.toBe("transferred");
    expect((await runApi({ ...s, agent: wf.json }, runId)).transfer).toMatchObject({ outcome: "failed", message: "Exotel offers no cold transfer" });
  });
});
