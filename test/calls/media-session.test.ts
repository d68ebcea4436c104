// Call sessions over each carrier's media protocol, with the simulator playing the callee's side: audio both ways
// byte-exact through the codecs, pacing, marks, clear on barge-in, hang-up from either side, the silence and length
// limits, and refused upgrades. The callee speaks a committed espeak-ng clip.
import { env, exports } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { CallSession } from "../../src/calls/session/call-session";
import { callSessionStub } from "../../src/calls/session/stub";
import { CALLEE_PROTOCOLS, CalleeStream, fromWire, toWire, type MediaProvider } from "../../src/dev/simulator/media/callee";
import { isVoiced, rms } from "../../src/lib/audio/level";
import { Resampler } from "../../src/lib/audio/resample";
import { readWav } from "../../src/lib/audio/wav";
import { deliverAll, play, runApi, runRow, setup, simRequests, startCall, type Setup } from "./support";

const clip = (name: string) => readWav(Uint8Array.from(atob(inject("audioClips")[name]), (c) => c.charCodeAt(0)));
const CALLEE_SPEECH = clip("callee-8k.wav");
const GREETING = clip("agent-16k.wav");
const FRAME = 160; // samples in 20 ms at 8 kHz
const GREETING_TEXT = "Hello Ada, this is Edgedial & co."; // the test agent's greeting, rendered
const LEAD = 3; // frames the pacer sends ahead of the play clock
/** Where the callee's clip has speech: a 20 ms frame of it from here on is loud enough to count. */
const SPEECH_AT = (() => {
  for (let i = 0; i + FRAME <= CALLEE_SPEECH.samples.length; i += FRAME) {
    if ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].every((k) => isVoiced(CALLEE_SPEECH.samples.subarray(i + k * FRAME, i + (k + 1) * FRAME)))) return i;
  }
  throw new Error("no speech in the clip");
})();

async function mediaUrl(provider: string, runId: number, token?: string) {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(env.CALLBACK_SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = [...new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(`${provider}:${runId}`)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  return `http://edgedial.test/api/v1/telephony/${provider}/stream/${runId}/${token ?? mac}`;
}

const upgrade = async (provider: string, runId: number, token?: string, headers: Record<string, string> = { Upgrade: "websocket" }) =>
  exports.default.fetch(new Request(await mediaUrl(provider, runId, token), { headers }));

async function connect(provider: MediaProvider, runId: number): Promise<CalleeStream> {
  const res = await upgrade(provider, runId);
  if (res.status !== 101) throw new Error(`upgrade refused: ${res.status} ${await res.text()}`);
  const ws = res.webSocket!;
  ws.accept();
  const callee = new CalleeStream(ws, CALLEE_PROTOCOLS[provider]);
  callee.open((await runRow(runId)).providerCallId!);
  return callee;
}

const frames = (wire: Uint8Array, bytesPerFrame: number) =>
  Array.from({ length: Math.floor(wire.length / bytesPerFrame) }, (_, i) => wire.subarray(i * bytesPerFrame, (i + 1) * bytesPerFrame));

describe.each(Object.keys(CALLEE_PROTOCOLS) as MediaProvider[])("%s media stream", (provider) => {
  const format = CALLEE_PROTOCOLS[provider].format;
  const bytesPerFrame = FRAME * (format.codec === "pcm16" ? 2 : 1);

  it("echo: the callee's speech comes back byte-exact, paced; the callee's hang-up ends the session and the run completes", async () => {
    const s = await setup(provider);
    const runId = await startCall(s);
    await callSessionStub(env, runId).prepare({ agent: "echo" });
    const callee = await connect(provider, runId);

    const sent = toWire(format, CALLEE_SPEECH.samples);
    callee.speak(CALLEE_SPEECH.samples);
    // What the echo agent repeats: every whole frame of speech (a quiet frame is not echoed), in order.
    const voiced = frames(sent, bytesPerFrame).filter((f) => isVoiced(fromWire(format, f)));
    expect(voiced.length).toBeGreaterThan(50);
    const expected = Uint8Array.from(voiced.flatMap((f) => [...f]));
    await callee.until(() => callee.receivedWire().length >= expected.length || callee.closed !== null);
    expect(callee.receivedWire()).toEqual(expected);
    // Each message is one 20 ms frame.
    expect(callee.received.every((p) => p.length === bytesPerFrame)).toBe(true);

    callee.hangup();
    await callee.until(() => callee.closed !== null);
    expect(callee.closed!.code).toBe(1000);
    expect(await callSessionStub(env, runId).snapshot()).toMatchObject({ ended: true, endReason: "callee_hangup", streamId: callee.streamId });
    // The callee hung up: nothing to hang up at the carrier, whose final status ends the run.
    const callId = (await runRow(runId)).providerCallId!;
    await deliverAll((await play(callId, "answered")).filter((c) => c.kind !== "stream"));
    expect((await runApi(s, runId)).status).toBe("completed");
  });

  it("greeting: a 16 kHz clip is resampled, paced out and marked; once the callee has heard it the agent hangs up through the carrier", async () => {
    const s = await setup(provider);
    const runId = await startCall(s);
    await callSessionStub(env, runId).prepare({ agent: "greeting", greetingClip: { samples: GREETING.samples, rate: 16000 } });
    const callee = await connect(provider, runId);
    const before = (await simRequests(s.acct)).length;
    // The callee listens: the line stays quiet while the greeting plays (2.44 s), a frame at a time.
    for (let i = 0; i < 200 && !callee.closed && !callee.marks.length; i++) {
      callee.silence(20);
      await callee.until(() => callee.received.length >= i + 1 + LEAD || callee.marks.length > 0 || callee.closed !== null);
    }
    await callee.until(() => callee.closed !== null);
    expect(callee.marks).toEqual(["greeting-end"]);
    const heard = fromWire(format, callee.receivedWire());
    // All of the greeting, at 8 kHz: its length within one frame, and as loud as the clip resampled on its own.
    const reference = new Resampler(16000, 8000).convert(GREETING.samples);
    expect(Math.abs(heard.length - reference.length)).toBeLessThanOrEqual(FRAME);
    expect(rms(heard) / rms(reference)).toBeGreaterThan(0.95);
    expect(rms(heard) / rms(reference)).toBeLessThan(1.05);
    expect(callee.closed!.code).toBe(1000);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("agent_hangup");
    // The turn lasts from the start until the callee heard the end (the clip, within the pacer's lead and a frame).
    expect(snap.turns).toEqual([{ role: "agent", text: GREETING_TEXT, startMs: 0, endMs: expect.any(Number) }]);
    expect(Math.abs(snap.turns[0].endMs - (reference.length / 8000) * 1000)).toBeLessThanOrEqual(100);
    // The agent ended the call: the session asked the carrier to hang up (Exotel has no hang-up: the socket closing is it).
    const after = (await simRequests(s.acct)).slice(before);
    const callId = (await runRow(runId)).providerCallId!;
    if (provider === "twilio") expect(after.some((r) => r.method === "POST" && r.path.endsWith(`/Calls/${callId}.json`) && /^Status=/.test(r.body))).toBe(true);
  });

  it("barge-in: the callee talking over the greeting clears it within one frame, and the transcript marks it interrupted", async () => {
    const s = await setup(provider);
    const runId = await startCall(s);
    await callSessionStub(env, runId).prepare({ agent: "greeting", greetingClip: { samples: GREETING.samples, rate: 16000 } });
    const callee = await connect(provider, runId);
    // The greeting starts with a lead of frames; each 20 ms of the callee's line lets one more out.
    for (let i = 0; i < 25; i++) callee.silence(20);
    await callee.until(() => callee.received.length >= 25 + LEAD);
    const beforeSpeech = callee.received.length;
    expect(beforeSpeech).toBe(25 + LEAD);
    // The callee starts talking: the first voiced frame stops the agent before another frame goes out.
    callee.speak(CALLEE_SPEECH.samples.subarray(SPEECH_AT, SPEECH_AT + FRAME * 10));
    await callee.until(() => callee.clears > 0);
    const atClear = callee.received.length;
    expect(atClear).toBe(beforeSpeech);
    // Nothing more is played after the clear; the agent hangs up once the callee falls quiet.
    for (let i = 0; i < 60 && !callee.closed; i++) callee.silence(20);
    await callee.until(() => callee.closed !== null);
    expect(callee.received.length).toBe(atClear);
    expect(callee.marks).toEqual([]);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.turns).toEqual([{ role: "agent", text: GREETING_TEXT, startMs: 0, endMs: 26 * 20, interrupted: true }]);
    expect(snap.endReason).toBe("agent_hangup");
  });

  it("the callee silent past the timeout: the session ends the call", async () => {
    const s = await setup(provider);
    const runId = await startCall(s);
    await callSessionStub(env, runId).prepare({ agent: "echo", silenceSeconds: 1 });
    const callee = await connect(provider, runId);
    callee.speak(CALLEE_SPEECH.samples.subarray(SPEECH_AT, SPEECH_AT + FRAME * 10));
    for (let i = 0; i < 45; i++) callee.silence(20);
    await callee.until(() => callee.received.length >= 10);
    expect(callee.closed).toBeNull();
    callee.silence(20 * 5);
    await callee.until(() => callee.closed !== null);
    expect(await callSessionStub(env, runId).snapshot()).toMatchObject({ ended: true, endReason: "callee_silent" });
  });

  it("max_call_seconds: by the audio clock, and by the alarm if the audio stops", async () => {
    const s = await setup(provider);
    const runId = await startCall(s);
    await callSessionStub(env, runId).prepare({ agent: "echo", maxCallSeconds: 1 });
    const callee = await connect(provider, runId);
    callee.speak(CALLEE_SPEECH.samples.subarray(0, FRAME * 60));
    await callee.until(() => callee.closed !== null);
    expect((await callSessionStub(env, runId).snapshot()).endReason).toBe("max_call_seconds");

    const runId2 = await startCall(s);
    const callee2 = await connect(provider, runId2);
    callee2.silence(100);
    const stub = callSessionStub(env, runId2);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await callee2.until(() => callee2.closed !== null);
    expect((await stub.snapshot()).endReason).toBe("max_call_seconds");
  });

  it("refuses a forged token, a replayed upgrade, an ended call and a request that is not an upgrade", async () => {
    const s = await setup(provider);
    const runId = await startCall(s);
    expect((await upgrade(provider, runId, "0".repeat(64))).status).toBe(401);
    expect((await upgrade(provider, runId, undefined, {})).status).toBe(426);
    await callSessionStub(env, runId).prepare({ agent: "echo" });
    const callee = await connect(provider, runId);
    const again = await upgrade(provider, runId);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ detail: "A media stream was already connected for this call" });
    callee.hangup();
    await callee.until(() => callee.closed !== null);
    expect((await upgrade(provider, runId)).status).toBe(409);
  });
});

describe("carriers without a media stream here", () => {
  it("refuse the upgrade with 404", async () => {
    const s = await setup("plivo");
    const runId = await startCall(s);
    const res = await upgrade("plivo", runId);
    expect(res.status).toBe(404);
    expect((await res.json<{ detail: string }>()).detail).toBe("Plivo has no media stream");
  });
});

// Keeps the class referenced so the pool binds it (and a rename breaks this file, not a runtime lookup).
void CallSession;
