// Handing a live call to a person, per carrier, through the simulator: the session's transfer (a test agent asks for
// it at once, as the run's variables say), the carrier's documented request, the run's `transfer` record and its end.
// Warm on Twilio: the person's call plays the whisper (a WAV edgedial serves) and joins a conference; on answer the
// caller's call is updated into it; no answer leaves the caller with the agent.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import { readWav } from "../../src/lib/audio/wav";
import { listen } from "./conversation-support";
import { CALLER, deliverAll, eventually, play, runApi, runRow, type Setup, simRequests } from "./support";
import { form, outcomeOf, PERSON, runOnceEnded, transferCall } from "./transfer-support";

describe("Twilio: cold transfer", () => {
  it("updates the live call with <Dial><Number> TwiML; the run ends transferred, the caller is not hung up", async () => {
    const { s, runId, callee } = await transferCall("twilio", { transfer_mode: "cold" });
    const { snap, outcome } = await outcomeOf(runId, callee);
    expect(outcome).toBe("connected");
    expect((await callSessionStub(env, runId).snapshot()).endReason).toBe("transferred");
    const sid = (await runRow(runId)).providerCallId!;
    const updates = (await simRequests(s.acct)).filter((r) => r.path.endsWith(`/Calls/${sid}.json`));
    // One update: the transfer. No Status=completed or canceled (edgedial does not hang the caller up).
    expect(updates.map((r) => form(r.body))).toEqual([
      {
        Twiml: `<?xml version="1.0" encoding="UTF-8"?><Response><Dial callerId="${CALLER}" timeout="20"><Number>${PERSON}</Number></Dial></Response>`,
      },
    ]);
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
    expect(snap.turns.map((t) => t.text)).toEqual(["transfer: connected"]);
  });

  it("a destination the calling policy refuses: failed with the policy's reason, nothing sent to the carrier, the call goes on", async () => {
    const { s, runId, callee } = await transferCall("twilio", { transfer_mode: "cold", transfer_to: "+19005550100" });
    const { outcome } = await outcomeOf(runId, callee);
    expect(outcome).toBe("failed");
    const sid = (await runRow(runId)).providerCallId!;
    expect((await simRequests(s.acct)).filter((r) => r.path.includes(`/Calls/${sid}`) || form(r.body).To === "+19005550100")).toEqual([]);
    const run = await runApi(s, runId);
    expect(run.transfer).toMatchObject({ destination: "+19005550100", outcome: "failed", message: expect.stringMatching(/^The calling policy refuses/) });
    await listen(callee, 200);
    expect(callee.closed).toBeNull();
    expect((await callSessionStub(env, runId).snapshot()).ended).toBe(false);
  });
});

/** The person's call the carrier was asked to place, and its leg id. */
async function personCall(s: Setup, runId: number) {
  const req = await eventually(
    async () => (await simRequests(s.acct)).find((r) => r.path.endsWith("/Calls.json") && form(r.body).To === PERSON),
    (r) => !!r,
  );
  const legId = await eventually(
    async () => ((await runRow(runId)).transfer as { leg_id?: string } | null)?.leg_id,
    (id) => !!id,
  );
  return { fields: form(req!.body), all: new URLSearchParams(req!.body), legId: legId! };
}

describe("Twilio: warm transfer", () => {
  it("the person's call plays the whisper (a WAV) then joins a conference; answered, the caller is moved into it: connected", async () => {
    const { s, runId, callee } = await transferCall("twilio", { transfer_mode: "warm" });
    const { fields, all, legId } = await personCall(s, runId);
    expect(fields).toMatchObject({ From: CALLER, Timeout: "20", StatusCallbackMethod: "POST" });
    expect(all.getAll("StatusCallbackEvent")).toEqual(["initiated", "ringing", "answered", "completed"]);
    expect(fields.StatusCallback).toMatch(new RegExp(`/api/v1/telephony/twilio/transfer-status/${runId}/[0-9a-f]{64}$`));
    const m = /<Play>([^<]+)<\/Play><Dial><Conference beep="false" endConferenceOnExit="true" waitUrl="">(edgedial-[^<]+)<\/Conference><\/Dial>/.exec(
      fields.Twiml,
    );
    expect(m, fields.Twiml).not.toBeNull();
    const [, whisperUrl, room] = m!;
    // The whisper: the agent's summary audio as a WAV, behind the run's token.
    const wav = await exports.default.fetch(new Request(whisperUrl.replace(/&amp;/g, "&")));
    expect(wav.status).toBe(200);
    expect(wav.headers.get("content-type")).toBe("audio/wav");
    const audio = readWav(new Uint8Array(await wav.arrayBuffer()));
    expect(audio.rate).toBe(8000);
    expect(audio.samples.length).toBe(8000);
    expect((await exports.default.fetch(new Request(whisperUrl.replace(/[0-9a-f]{64}$/, "0".repeat(64))))).status).toBe(401);

    // While the person's phone rings the caller stays with the agent.
    await listen(callee, 200);
    expect((await callSessionStub(env, runId).snapshot()).ended).toBe(false);
    await deliverAll(await play(legId, "answered"));
    const { outcome } = await outcomeOf(runId, callee);
    expect(outcome).toBe("connected");
    const sid = (await runRow(runId)).providerCallId!;
    const moved = (await simRequests(s.acct)).filter((r) => r.path.endsWith(`/Calls/${sid}.json`)).map((r) => form(r.body));
    expect(moved).toEqual([
      {
        Twiml: `<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Conference beep="false" endConferenceOnExit="true" waitUrl="">${room}</Conference></Dial></Response>`,
      },
    ]);
    expect((await callSessionStub(env, runId).snapshot()).endReason).toBe("transferred");
    const run = await runOnceEnded(s, runId);
    expect(run.transfer).toMatchObject({ destination: PERSON, mode: "warm", outcome: "connected", message: null });
    expect(run.end_reason).toBe("transferred");

    // The link does not outlive the transfer: once its ring time and margin are past, the same URL is a 404.
    const fresh = await exports.default.fetch(new Request(whisperUrl.replace(/&amp;/g, "&")));
    expect(fresh.status).toBe(200);
    await fresh.body?.cancel();
    const asked = new Date(Date.now() - (20 + 121) * 1000).toISOString();
    await env.DB.prepare("UPDATE workflow_runs SET transfer = json_set(transfer, '$.requested_at', ?) WHERE id = ?").bind(asked, runId).run();
    const late = await exports.default.fetch(new Request(whisperUrl.replace(/&amp;/g, "&")));
    expect(late.status).toBe(404);
    expect(await late.json()).toEqual({ detail: "The whisper has expired: it is served only while the transfer rings" });
  });

  it("nobody answers: no_answer, the caller's call is left alone and stays with the agent", async () => {
    const { s, runId, callee } = await transferCall("twilio", { transfer_mode: "warm" });
    const { legId } = await personCall(s, runId);
    await deliverAll(await play(legId, "no_answer"));
    const { outcome } = await outcomeOf(runId, callee);
    expect(outcome).toBe("no_answer");
    const sid = (await runRow(runId)).providerCallId!;
    expect((await simRequests(s.acct)).filter((r) => r.path.endsWith(`/Calls/${sid}.json`))).toEqual([]);
    await listen(callee, 200);
    expect(callee.closed).toBeNull();
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.ended).toBe(false);
    expect((await runApi(s, runId)).transfer).toMatchObject({ mode: "warm", outcome: "no_answer", message: "The person did not answer" });
  });
});
