// The call session's time limits run on the wall clock, and its input is robust: a stream that stops is ended at the
// silence limit, a burst of late frames is not silence, an unreadable frame is dropped (only a sustained run of them
// ends the call), and a flood on one call's socket is dropped without starving another call's audio.
import { env, exports } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { MAX_BAD_IN_A_ROW } from "../../src/calls/session/input-guard";
import { MARK_CONFIRM_MS } from "../../src/calls/session/media-loop";
import { callSessionStub } from "../../src/calls/session/stub";
import { isVoiced } from "../../src/lib/audio/level";
import { readWav } from "../../src/lib/audio/wav";
import { CALLEE_PROTOCOLS, type CalleeStream } from "../../src/dev/simulator/media/callee";
import { connect, upgrade } from "./media-support";
import { runApi, runRow, setup, startCall } from "./support";

const SPEECH = readWav(Uint8Array.from(atob(inject("audioClips")["callee-8k.wav"]), (c) => c.charCodeAt(0))).samples;
const FRAME = 160;
/** Where the clip's speech starts: a frame from here on is voiced. */
const SPEECH_AT = (() => {
  for (let i = 0; i + FRAME * 10 <= SPEECH.length; i += FRAME) {
    if ([...Array(10).keys()].every((k) => isVoiced(SPEECH.subarray(i + k * FRAME, i + (k + 1) * FRAME)))) return i;
  }
  throw new Error("no speech in the clip");
})();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends `n` frames of silence as fast as the socket takes them (one message, built once). */
function burst(callee: CalleeStream, n: number) {
  const frame = JSON.stringify({ event: "media", streamSid: callee.streamId, media: { track: "inbound", payload: btoa("\xff".repeat(FRAME)) } });
  for (let i = 0; i < n; i++) callee.ws.send(frame);
}

async function echoCall(options: { silenceSeconds?: number } = {}) {
  const s = await setup("twilio");
  const runId = await startCall(s);
  await callSessionStub(env, runId).prepare({ agent: "echo", ...options });
  const callee = await connect("twilio", runId);
  return { s, runId, callee };
}

describe("the call session's clock and input", () => {
  it("a stream that stops sending frames ends at the silence limit by the wall clock (within a second), with the reason on the run", async () => {
    const { s, runId, callee } = await echoCall({ silenceSeconds: 2 });
    const t0 = Date.now();
    callee.silence(100);
    await callee.until(() => callee.closed !== null);
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(1900);
    expect(waited).toBeLessThanOrEqual(3000);
    expect((await callSessionStub(env, runId).snapshot()).endReason).toBe("callee_silent");
    const run = await runApi(s, runId);
    expect(run.end_reason).toBe("callee_silent");
    expect(run.notes).toMatch(/said nothing for 2 s/);
  });

  // 5,000 frames, five times the input guard's burst of 1,000: most are dropped. Not more: a burst the session is
  // still taking in 3 s later (FLOOD_MS) is, by the guard's rule, a socket flooding above 1,000 messages a second, and
  // beside a CPU hog 20,000 frames took that long to arrive and ended the call as media_error (2026-11-29).
  it("a burst of 5,000 frames (100 s of audio in a moment) is not silence: the call goes on", async () => {
    const { runId, callee } = await echoCall({ silenceSeconds: 5 });
    const t0 = Date.now();
    burst(callee, 5_000);
    const sent = Date.now() - t0;
    await sleep(1500);
    expect(callee.closed).toBeNull();
    expect((await callSessionStub(env, runId).snapshot()).ended).toBe(false);
    expect(sent).toBeLessThan(3000);
    // Still listening: the callee's speech comes back.
    const before = callee.received.length;
    callee.speak(SPEECH.subarray(SPEECH_AT, SPEECH_AT + FRAME * 5));
    await callee.until(() => callee.received.length > before);
    callee.hangup();
    await callee.until(() => callee.closed !== null);
    expect((await callSessionStub(env, runId).snapshot()).endReason).toBe("callee_hangup");
  });

  it("an undecodable frame is dropped and the conversation goes on", async () => {
    const { runId, callee } = await echoCall();
    callee.ws.send(JSON.stringify({ event: "media", streamSid: callee.streamId, media: { track: "inbound", payload: "%%% not base64 %%%" } }));
    callee.ws.send("{ not json");
    callee.speak(SPEECH.subarray(SPEECH_AT, SPEECH_AT + FRAME * 5));
    await callee.until(() => callee.received.length >= 5 || callee.closed !== null);
    expect(callee.closed).toBeNull();
    expect((await callSessionStub(env, runId).snapshot()).ended).toBe(false);
    callee.hangup();
    await callee.until(() => callee.closed !== null);
  });

  it("a sustained run of unreadable frames ends the call as media_error, and the run says why", async () => {
    const { s, runId, callee } = await echoCall();
    const bad = JSON.stringify({ event: "media", streamSid: callee.streamId, media: { track: "inbound", payload: "%%%" } });
    for (let i = 0; i < MAX_BAD_IN_A_ROW - 1; i++) callee.ws.send(bad);
    callee.silence(20);
    await sleep(300);
    // One good frame in between: the run starts over.
    expect(callee.closed).toBeNull();
    for (let i = 0; i < MAX_BAD_IN_A_ROW; i++) callee.ws.send(bad);
    await callee.until(() => callee.closed !== null);
    expect((await callSessionStub(env, runId).snapshot()).endReason).toBe("media_error");
    const run = await runApi(s, runId);
    expect(run.end_reason).toBe("media_error");
    expect(run.notes).toMatch(/media stream failed: 500 unreadable media messages in a row \(999 in all\)/);
  });

  it("a flood on one call's socket is dropped: another call's audio is not held up (95 of its 100 frames echoed within 60 ms), and health answers", async () => {
    const a = await echoCall();
    const b = await echoCall();
    // Call A's callee speaks in real time; each frame's echo shows how long the session took to hand it back.
    const sent: number[] = [];
    const arrivals: number[] = [];
    a.callee.ws.addEventListener("message", () => arrivals.push(Date.now()));
    const voiced = SPEECH.subarray(SPEECH_AT, SPEECH_AT + FRAME);
    const speaking = (async () => {
      for (let i = 0; i < 100; i++) {
        sent.push(Date.now());
        a.callee.speak(voiced);
        await sleep(20);
      }
    })();
    await sleep(300);
    // Call B's socket floods: 20,000 frames in a few chunks.
    for (let chunk = 0; chunk < 20; chunk++) {
      burst(b.callee, 1000);
      await sleep(0);
    }
    // Health answers ok, and soon, while the flood is dispatched.
    const t = Date.now();
    expect((await exports.default.fetch("http://edgedial.test/api/v1/health")).status).toBe(200);
    const healthMs = Date.now() - t;
    await speaking;
    await sleep(100);
    // Every frame echoed, none lost to the flood.
    expect(arrivals.length).toBe(100);
    const delays = arrivals.map((at, i) => at - sent[i]);
    // A flood that held the session up would delay a run of frames (its 20,000 frames take far longer than 60 ms to
    // handle); a busy machine delays the odd frame whatever the flood does (seen: one of 120 ms, one of 359 ms).
    const late = delays.filter((d) => d > 60);
    expect(late.length, `frames echoed over 60 ms late: ${late.join(", ")}`).toBeLessThanOrEqual(5);
    expect(healthMs).toBeLessThan(1000);
    // The flood was dropped, not ended: call B is still up.
    expect(b.callee.closed).toBeNull();
    for (const c of [a.callee, b.callee]) c.hangup();
    expect((await runRow(b.runId)).endReason).toBeNull();
  });

  it("a carrier that never confirms a mark: the greeting still counts as heard a few seconds after it was sent, and the call ends", async () => {
    const s = await setup("twilio");
    const runId = await startCall(s);
    const tone = new Int16Array(8000 / 2).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));
    await callSessionStub(env, runId).prepare({ agent: "greeting", greetingClip: { samples: tone, rate: 8000 } });
    const res = await upgrade("twilio", runId);
    expect(res.status).toBe(101);
    const ws = res.webSocket!;
    ws.accept();
    let marks = 0;
    let closed = false;
    ws.addEventListener("message", (e) => {
      if (typeof e.data === "string" && JSON.parse(e.data).event === "mark") marks++;
    });
    ws.addEventListener("close", () => {
      closed = true;
    });
    const protocol = CALLEE_PROTOCOLS.twilio;
    for (const m of protocol.opening((await runRow(runId)).providerCallId!, "MZ-never-echoes")) ws.send(m);
    const t0 = Date.now();
    // The callee's line runs in real time; its carrier plays the audio but never echoes the mark.
    const silent = new Uint8Array(FRAME).fill(0xff);
    for (let i = 0; !closed && i < 400; i++) {
      ws.send(protocol.audio(silent, "MZ-never-echoes", i));
      await sleep(20);
    }
    expect(closed).toBe(true);
    expect(marks).toBe(1);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(MARK_CONFIRM_MS);
    expect(took).toBeLessThan(MARK_CONFIRM_MS + 3000);
    expect((await callSessionStub(env, runId).snapshot()).endReason).toBe("agent_hangup");
  });
});
