// Transfers on the sandbox carrier: the sandbox asks the simulator's Twilio exactly as Twilio is asked (cold: the live
// call's TwiML replaced by a `<Dial><Number>`; warm: a call to the person whose TwiML plays the whisper then joins a
// conference, and on its answer the caller's call is moved into it), the simulator records who the caller ended with,
// and the run records the transfer's outcome as on Twilio. The simulator's own person (who answers by itself under
// `npm run dev`) cannot reach edgedial.test from the test pool: here the test delivers the person's call's callbacks.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callSessionStub } from "../src/calls/session/stub";
import { SANDBOX_CREDENTIALS } from "../src/dev/simulator/sandbox";
import { deliverAll, eventually, play, runApi, runRow, sim, type Recorded } from "./calls/support";
import { outcomeOf, PERSON } from "./calls/transfer-support";
import { sandboxCall, sandboxSetup, simCall } from "./sandbox-support";

const form = (body: string) => Object.fromEntries(new URLSearchParams(body));
const sandboxRequests = () => sim<Recorded[]>("GET", "/accounts/sandbox/requests");
const ended = (s: Awaited<ReturnType<typeof sandboxSetup>>, runId: number) =>
  eventually(
    () => runApi({ org: s.org, agent: s.agent } as never, runId),
    (r) => r.transfer?.outcome != null && r.end_reason != null,
  );

describe("sandbox: cold transfer", () => {
  it("replaces the call's TwiML with <Dial><Number>; the simulated person answers; the run ends transferred, connected", async () => {
    const s = await sandboxSetup();
    const { runId, callId, callee } = await sandboxCall(s, "transfer", { transfer_to: PERSON, transfer_mode: "cold", transfer_timeout: "20" });
    const { outcome } = await outcomeOf(runId, callee);
    expect(outcome).toBe("connected");
    const updates = (await sandboxRequests()).filter((r) => r.path === `/2010-04-01/Accounts/${SANDBOX_CREDENTIALS.account_sid}/Calls/${callId}.json`);
    expect(updates.map((r) => form(r.body).Twiml)).toEqual([
      expect.stringContaining(`<Dial callerId="${s.number}" timeout="20"><Number>${PERSON}</Number></Dial>`),
    ]);
    // The simulator's record of the call: the person the <Dial> rang took it.
    expect((await simCall(callId)).extra.transfer).toMatchObject({ mode: "cold", to: PERSON, answered: true });
    const run = await ended(s, runId);
    expect(run.end_reason).toBe("transferred");
    expect(run.transfer).toMatchObject({ destination: PERSON, mode: "cold", outcome: "connected", message: null });
  });
});

describe("sandbox: warm transfer", () => {
  it("calls the person (whisper, then conference); answered, the caller joins them: connected, the run ends transferred", async () => {
    const s = await sandboxSetup();
    const { runId, callId, callee } = await sandboxCall(s, "transfer", { transfer_to: PERSON, transfer_mode: "warm", transfer_timeout: "20" });
    const legId = await eventually(
      async () => ((await runRow(runId)).transfer as { leg_id?: string } | null)?.leg_id,
      (id) => !!id,
    );
    expect(legId).toMatch(/^CA[0-9a-f]{32}$/);
    const placed = (await sandboxRequests()).find((r) => r.path.endsWith("/Calls.json") && form(r.body).StatusCallback?.includes(`/transfer-status/${runId}/`));
    const fields = form(placed!.body);
    // Twilio's call to the person, ringing as long as the configuration's callee does.
    expect(fields).toMatchObject({ To: PERSON, From: s.number, Timeout: "20", SandboxAnswerAfterMs: "30000" });
    expect(fields.StatusCallback).toMatch(new RegExp(`/api/v1/telephony/sandbox/transfer-status/${runId}/[0-9a-f]{64}$`));
    const m = /<Play>([^<]+)<\/Play><Dial><Conference[^>]*>(edgedial-[^<]+)<\/Conference><\/Dial>/.exec(fields.Twiml);
    expect(m, fields.Twiml).not.toBeNull();
    // The whisper the person hears: the agent's summary as a WAV edgedial serves while the transfer rings.
    const wav = await exports.default.fetch(new Request(m![1].replace(/&amp;/g, "&")));
    expect(wav.status).toBe(200);
    expect(wav.headers.get("content-type")).toBe("audio/wav");
    await wav.body?.cancel();
    // While the person's phone rings the caller stays with the agent.
    expect((await callSessionStub(env, runId).snapshot()).ended).toBe(false);

    // The person answers (Twilio's status callbacks of their call): the caller's call is moved into the conference.
    await deliverAll(await play(legId!, "answered"));
    const { outcome } = await outcomeOf(runId, callee);
    expect(outcome).toBe("connected");
    const moved = (await sandboxRequests()).filter((r) => r.path.endsWith(`/Calls/${callId}.json`)).map((r) => form(r.body).Twiml);
    expect(moved).toEqual([expect.stringContaining(`<Conference beep="false" endConferenceOnExit="true" waitUrl="">${m![2]}</Conference>`)]);
    // The simulator bridged the caller with the person it called.
    expect((await simCall(callId)).extra.transfer).toMatchObject({ mode: "warm", to: PERSON, person_call: legId, room: m![2] });
    expect((await simCall(legId!)).extra.bridgedWith).toBe(callId);
    const run = await ended(s, runId);
    expect(run.end_reason).toBe("transferred");
    expect(run.transfer).toMatchObject({ destination: PERSON, mode: "warm", outcome: "connected", message: null });
  });

  it("the person does not answer: no_answer, and the caller stays with the agent", async () => {
    const s = await sandboxSetup();
    const { runId, callee } = await sandboxCall(s, "transfer", { transfer_to: PERSON, transfer_mode: "warm", transfer_timeout: "20" });
    const legId = await eventually(
      async () => ((await runRow(runId)).transfer as { leg_id?: string } | null)?.leg_id,
      (id) => !!id,
    );
    await deliverAll(await play(legId!, "no_answer"));
    const { outcome } = await outcomeOf(runId, callee);
    expect(outcome).toBe("no_answer");
    expect(callee.closed).toBeNull();
    expect((await callSessionStub(env, runId).snapshot()).ended).toBe(false);
  });
});
