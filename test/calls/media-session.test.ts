// Call sessions over each carrier's media protocol, with the simulator playing the callee's side: audio both ways
// byte-exact through the codecs, pacing, marks, clear on barge-in, hang-up from either side, the silence and length
// limits, and refused upgrades. The callee speaks a committed espeak-ng clip.
import { env, exports } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import { describe, expect, inject, it } from "vitest";
import { JITTER_LEAD_FRAMES } from "../../src/calls/session/media-loop";
import { CallSession } from "../../src/calls/call-session";
import { callSessionStub } from "../../src/calls/session/stub";
import { CALLEE_PROTOCOLS, fromWire, toWire, type MediaProvider } from "../../src/dev/simulator/media/callee";
import { streamUrlIn } from "../../src/dev/simulator/media/play";
import { streamToken } from "../../src/calls/callbacks/callback-urls";
import { connect, echoCall, upgrade } from "./media-support";
import { isVoiced, rms } from "../../src/lib/audio/level";
import { Resampler } from "../../src/lib/audio/resample";
import { readWav } from "../../src/lib/audio/wav";
import { pcm16ToBytes } from "../../src/lib/audio/pcm";
import { getDb } from "../../src/lib/db";
import { workflowRuns } from "../../src/db/schema";
import { eq } from "drizzle-orm";
import { getProvider } from "../../src/telephony/providers/registry";
import { call, createOrg } from "../helpers";
import { callbackRequest, deliverAll, drain, eventually, play, redeliver, runApi, runRow, setup, simRequests, startCall } from "./support";

const clip = (name: string) => readWav(Uint8Array.from(atob(inject("audioClips")[name]), (c) => c.charCodeAt(0)));
const CALLEE_SPEECH = clip("callee-8k.wav");
const GREETING = clip("agent-16k.wav");
const GREETING_TEXT = "Hello Ada, this is Edgedial & co."; // the test agent's greeting, rendered
const LEAD = JITTER_LEAD_FRAMES; // frames the pacer sends ahead of the play clock (every carrier here can clear)

/** The callee's clip at `rate`, and where its speech starts: ten 20 ms frames from there on count as speech. */
function calleeSpeech(rate: number) {
  const samples = rate === 8000 ? CALLEE_SPEECH.samples : new Resampler(8000, rate as 16000).convert(CALLEE_SPEECH.samples);
  const frame = rate / 50;
  for (let i = 0; i + frame * 10 <= samples.length; i += frame) {
    if ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].every((k) => isVoiced(samples.subarray(i + k * frame, i + (k + 1) * frame)))) return { samples, at: i };
  }
  throw new Error("no speech in the clip");
}

/** Waits for `p`, but no longer than 2 s: what should have come by then fails its assertion instead of hanging. */
const soon = (p: Promise<void>) => Promise.race([p, new Promise<void>((r) => setTimeout(r, 2000))]);

const frames = (wire: Uint8Array, bytesPerFrame: number) =>
  Array.from({ length: Math.floor(wire.length / bytesPerFrame) }, (_, i) => wire.subarray(i * bytesPerFrame, (i + 1) * bytesPerFrame));

describe.each(Object.keys(CALLEE_PROTOCOLS) as MediaProvider[])("%s media stream", (provider) => {
  const protocol = CALLEE_PROTOCOLS[provider];
  const format = protocol.format;
  const FRAME = format.rate / 50; // samples in 20 ms
  const bytesPerFrame = FRAME * (format.codec === "pcm16" ? 2 : 1);
  const speech = calleeSpeech(format.rate);
  const SPEECH_AT = speech.at;

  it("echo: the callee's speech comes back byte-exact, paced; the callee's hang-up ends the session and the run completes", async () => {
    const { s, runId } = await echoCall(provider);
    const callee = await connect(provider, runId);

    const sent = toWire(format, speech.samples);
    callee.speak(speech.samples);
    // What the echo agent repeats: every whole frame of speech (a quiet frame is not echoed), in order.
    const voiced = frames(sent, bytesPerFrame).filter((f) => isVoiced(fromWire(format, f)));
    expect(voiced.length).toBeGreaterThan(50);
    const expected = Uint8Array.from(voiced.flatMap((f) => [...f]));
    await callee.until(() => callee.receivedWire().length >= expected.length || callee.closed !== null);
    expect(callee.receivedWire()).toEqual(expected);
    // Each message is one 20 ms frame.
    expect(callee.received.every((p) => p.length === bytesPerFrame)).toBe(true);

    // The carrier's own account of the call (answered, then completed), taken before the hang-up and delivered after.
    const callId = (await runRow(runId)).providerCallId!;
    const outcome = (await play(callId, "answered")).filter((c) => c.kind !== "stream");
    callee.hangup();
    await callee.until(() => callee.closed !== null);
    // The carrier's stop message is answered by a normal close; a carrier that just closes (Vonage) sees its own.
    if (protocol.stop(callee.streamId) !== null) expect(callee.closed!.code).toBe(1000);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap).toMatchObject({ ended: true, endReason: "callee_hangup" });
    // The stream's id as the carrier named it (Vonage names none).
    expect(snap.streamId).toBe(provider === "vonage" ? "" : callee.streamId);
    // The callee hung up: nothing to hang up at the carrier, whose final status ends the run.
    await deliverAll(outcome);
    // A command-driven carrier (Telnyx) acts on the answer, then reports the end. (Only a carrier that sends a stop
    // is asked: in the test runtime a socket closed from the test's side resets the simulator's memory.)
    if (protocol.stop(callee.streamId) !== null) await drain(callId);
    // ARI's outcome arrives over the events socket the ARI object holds, a moment later.
    expect(
      (
        await eventually(
          () => runApi(s, runId),
          (r) => r.status === "completed",
        )
      ).status,
    ).toBe("completed");
  });

  it("greeting: a 16 kHz clip is resampled, paced out and marked; once the callee has heard it the agent hangs up through the carrier", async () => {
    const s = await setup(provider);
    const runId = await startCall(s);
    await callSessionStub(env, runId).prepare({ agent: "greeting", greetingClip: { samples: GREETING.samples, rate: 16000 } });
    const callee = await connect(provider, runId);
    const before = (await simRequests(s.acct)).length;
    const reference = new Resampler(16000, format.rate as 8000).convert(GREETING.samples);
    const expectedFrames = Math.ceil(reference.length / FRAME);
    // The greeting opens with a lead of frames, queued at the carrier from the callee's clock at 0.
    await callee.until(() => callee.received.length >= LEAD);
    // The callee listens: the line stays quiet while the greeting plays (2.44 s), 20 ms at a time.
    for (let i = 0; callee.received.length < expectedFrames; i++) {
      if (i > 400 || callee.closed) throw new Error("the greeting never ended");
      callee.silence(20);
      await callee.until(() => callee.received.length >= Math.min(i + 1 + LEAD, expectedFrames) || callee.closed !== null);
    }
    // All of it is out and the mark behind it, but the last frames are still ahead of the callee's clock: the
    // carrier has not played them, so it confirms nothing yet and the call goes on.
    await soon(callee.until(() => callee.marks.length > 0 || callee.closed !== null));
    expect(callee.marks).toEqual(["greeting-end"]);
    expect(callee.unplayedMs).toBeGreaterThan(0);
    expect(callee.echoed).toEqual([]);
    expect(callee.closed).toBeNull();
    // The callee's line runs on until the carrier has played the greeting (its answer to the mark goes out then).
    for (let k = 0; !callee.echoed.length; k++) {
      if (k > LEAD + 1) throw new Error("the carrier never played the greeting out");
      callee.silence(20);
    }
    await callee.until(() => callee.closed !== null);
    // Confirmed when the last frame had played by the callee's clock, and the agent hung up only after that.
    expect(callee.echoed).toEqual([{ name: "greeting-end", atMs: expectedFrames * 20, cleared: false }]);
    expect(callee.unplayedMs).toBe(0);
    const heard = fromWire(format, callee.receivedWire());
    // All of the greeting, at the wire rate: its length within one frame, and as loud as the clip resampled on its own.
    expect(Math.abs(heard.length - reference.length)).toBeLessThanOrEqual(FRAME);
    expect(rms(heard) / rms(reference)).toBeGreaterThan(0.95);
    expect(rms(heard) / rms(reference)).toBeLessThan(1.05);
    expect(callee.closed!.code).toBe(1000);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("agent_hangup");
    // The turn lasts from the start until the carrier said the callee heard the end: the clip's whole frames.
    expect(snap.turns).toEqual([{ role: "agent", text: GREETING_TEXT, startMs: 0, endMs: expectedFrames * 20 }]);
    expect(Math.abs(snap.turns[0].endMs - (reference.length / format.rate) * 1000)).toBeLessThan(20);
    // The run's details carry the same turns.
    expect((await runApi(s, runId)).transcript).toEqual([{ role: "agent", text: GREETING_TEXT, start_ms: 0, end_ms: snap.turns[0].endMs, interrupted: false }]);
    // The agent ended the call: the session asked the carrier to hang up (Exotel has no hang-up: the socket closing is it).
    const after = (await simRequests(s.acct)).slice(before);
    const callId = (await runRow(runId)).providerCallId!;
    if (provider === "twilio") expect(after.some((r) => r.method === "POST" && r.path.endsWith(`/Calls/${callId}.json`) && /^Status=/.test(r.body))).toBe(true);
    // Every carrier with a hang-up request got one for this call (the call id in its path or body).
    else if (provider !== "exotel") expect(after.filter((r) => decodeURIComponent(r.path + r.body).includes(callId)).length).toBeGreaterThan(0);
  });

  it("a carrier playing 200 ms behind the session's clock (its jitter buffer): the agent hangs up only once the carrier confirms the greeting played", async () => {
    const s = await setup(provider);
    const runId = await startCall(s);
    await callSessionStub(env, runId).prepare({ agent: "greeting", greetingClip: { samples: GREETING.samples, rate: 16000 } });
    const callee = await connect(provider, runId, { playoutDelayMs: 200 });
    const expectedFrames = Math.ceil(new Resampler(16000, format.rate as 8000).convert(GREETING.samples).length / FRAME);
    await callee.until(() => callee.received.length >= LEAD);
    for (let i = 0; callee.received.length < expectedFrames; i++) {
      if (i > 400 || callee.closed) throw new Error("the greeting never ended");
      callee.silence(20);
      await callee.until(() => callee.received.length >= Math.min(i + 1 + LEAD, expectedFrames) || callee.closed !== null);
    }
    // By the session's own clock the greeting has played a few frames from now; the carrier plays it 200 ms later.
    for (let k = 0; !callee.echoed.length; k++) {
      if (k > LEAD + 12 || callee.closed) throw new Error(`the call ended before the carrier played the greeting (${callee.clockMs} ms)`);
      callee.silence(20);
      await new Promise((r) => setTimeout(r, 0));
    }
    await callee.until(() => callee.closed !== null);
    expect(callee.echoed).toEqual([{ name: "greeting-end", atMs: expectedFrames * 20 + 200, cleared: false }]);
    expect(callee.unplayedMs).toBe(0);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("agent_hangup");
    // The turn ends when the carrier said so, not when the session's pacer thought it played.
    expect(snap.turns).toEqual([{ role: "agent", text: GREETING_TEXT, startMs: 0, endMs: expectedFrames * 20 + 200 }]);
  });

  it("barge-in: the callee talking over the greeting clears it within one frame, and the transcript marks it interrupted", async () => {
    const s = await setup(provider);
    const runId = await startCall(s);
    await callSessionStub(env, runId).prepare({ agent: "greeting", greetingClip: { samples: GREETING.samples, rate: 16000 } });
    const callee = await connect(provider, runId);
    // The greeting starts with a lead of frames; each 20 ms of the callee's line lets one more out (taken in turn,
    // so the carrier queues each as the callee's clock reaches it).
    await callee.until(() => callee.received.length >= LEAD);
    for (let i = 0; i < 25; i++) {
      callee.silence(20);
      await callee.until(() => callee.received.length >= i + 1 + LEAD);
    }
    const beforeSpeech = callee.received.length;
    expect(beforeSpeech).toBe(25 + LEAD);
    // The callee starts talking: the first voiced frame stops the agent before another frame goes out.
    callee.speak(speech.samples.subarray(SPEECH_AT, SPEECH_AT + FRAME));
    // Every carrier's clear goes out at once (and no audio after it), dropping what its buffer still held.
    await soon(callee.until(() => callee.clears > 0 || callee.closed !== null));
    expect(callee.clears).toBe(1);
    expect(callee.received.length).toBe(beforeSpeech);
    // The carrier held the lead beyond the callee's clock (26 frames in): the clear dropped it unplayed.
    expect(callee.droppedMs).toBe((25 + LEAD - 26) * 20);
    expect(callee.unplayedMs).toBe(0);
    callee.speak(speech.samples.subarray(SPEECH_AT + FRAME, SPEECH_AT + FRAME * 10));
    // The agent hangs up once the callee falls quiet.
    for (let i = 0; i < 60; i++) callee.silence(20);
    await callee.until(() => callee.closed !== null);
    expect(callee.received.length).toBe(beforeSpeech);
    expect(callee.clears).toBe(1);
    expect(callee.marks).toEqual([]);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.turns).toEqual([{ role: "agent", text: GREETING_TEXT, startMs: 0, endMs: 26 * 20, interrupted: true }]);
    expect((await runApi(s, runId)).transcript).toEqual([{ role: "agent", text: GREETING_TEXT, start_ms: 0, end_ms: 520, interrupted: true }]);
    expect(snap.endReason).toBe("agent_hangup");
  });

  it("the callee silent past the timeout: the session ends the call", async () => {
    const s = await setup(provider);
    const runId = await startCall(s);
    await callSessionStub(env, runId).prepare({ agent: "echo", silenceSeconds: 1 });
    const callee = await connect(provider, runId);
    callee.speak(speech.samples.subarray(SPEECH_AT, SPEECH_AT + FRAME * 10));
    for (let i = 0; i < 45; i++) callee.silence(20);
    await callee.until(() => callee.received.length >= 10);
    expect(callee.closed).toBeNull();
    callee.silence(20 * 5);
    await callee.until(() => callee.closed !== null);
    expect(await callSessionStub(env, runId).snapshot()).toMatchObject({ ended: true, endReason: "callee_silent" });
  });

  it("max_call_seconds: by the wall clock, not the audio's, and by the heartbeat alarm once the audio stops", async () => {
    const s = await setup(provider);
    const runId = await startCall(s);
    await callSessionStub(env, runId).prepare({ agent: "echo", maxCallSeconds: 1 });
    // Before the socket opens: the session counts the call from its connection, which a busy machine can take a
    // while to finish (taken after it, the test once measured 940 ms for a call the session had timed at 1 s).
    const t0 = Date.now();
    const callee = await connect(provider, runId);
    // Three seconds of audio in a burst: the audio clock passes the limit, the wall clock does not.
    callee.speak(speech.samples.subarray(0, FRAME * 150));
    await callee.until(() => callee.received.length > 0 || callee.closed !== null);
    expect(callee.closed).toBeNull();
    // Then no more audio: the heartbeat ends the call when a second of the call has passed.
    await callee.until(() => callee.closed !== null);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect((await callSessionStub(env, runId).snapshot()).endReason).toBe("max_call_seconds");
    expect((await runRow(runId)).endReason).toBe("max_call_seconds");
  });

  it("refuses a forged token, a replayed upgrade, an ended call and a request that is not an upgrade; a fresh stream URL reconnects", async () => {
    const s = await setup(provider);
    const runId = await startCall(s);
    expect((await upgrade(provider, runId, "0".repeat(64))).status).toBe(401);
    expect((await upgrade(provider, runId, undefined, {})).status).toBe(426);
    await callSessionStub(env, runId).prepare({ agent: "echo" });
    const token = await streamToken(env.CALLBACK_SECRET, provider, runId);
    const first = await upgrade(provider, runId, token);
    expect(first.status).toBe(101);
    first.webSocket!.accept();
    const closed = new Promise<CloseEvent>((r) => first.webSocket!.addEventListener("close", r));
    // The same URL again (a replay) is refused: each stream URL opens once.
    expect((await upgrade(provider, runId, token)).status).toBe(403);
    // A freshly minted one (what the resume document hands a reconnecting carrier) takes over the call's media.
    const callee = await connect(provider, runId);
    expect((await closed).reason).toBe("superseded by a reconnection");
    expect(await callSessionStub(env, runId).mediaState()).toBe("live");
    callee.hangup();
    await callee.until(() => callee.closed !== null);
    // The session that ended the call made its run final (run-final.ts): the route refuses before the session.
    await eventually(
      () => runRow(runId),
      (r) => r.status === "completed",
    );
    const ended = await upgrade(provider, runId);
    expect(ended.status).toBe(409);
    expect(await ended.json()).toMatchObject({ detail: "This call has ended" });
  });
});

// Keeps the class referenced so the pool binds it (and a rename breaks this file, not a runtime lookup).
void CallSession;

describe("with a voice agent set (VOICE_AGENT), the answer connects the call's audio to its session", () => {
  it.each(["twilio", "cloudonix", "plivo", "vobiz", "vonage"] as const)("%s", async (provider) => {
    const s = await setup(provider);
    const runId = await startCall(s);
    const callId = (await runRow(runId)).providerCallId!;
    const answer = (await play(callId, "answered")).find((c) => c.kind === "answer")!;
    const ctx = createExecutionContext();
    const res = await worker.fetch(callbackRequest(answer), { ...env, VOICE_AGENT: "echo" }, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(200);
    const body = await res.text();
    // The run's stream URL, with a stream token of its own (minted for this document).
    expect(streamUrlIn(body)).toMatch(new RegExp(`^ws://edgedial\\.test/api/v1/telephony/${provider}/stream/${runId}/\\d+\\.[0-9a-f]{32}\\.[0-9a-f]{64}$`));
    expect(body).not.toMatch(/<Say|<Speak|"talk"/);
    // Without the setting the carrier speaks the greeting, as before (the carrier's retry, signed afresh).
    const again = await redeliver(callId, answer);
    const plain = await exports.default.fetch(callbackRequest(again));
    expect(await plain.text()).toMatch(/<Say|<Speak|"talk"/);
  });
});

describe("recordings", () => {
  it("a call leaves a two-channel WAV on the run: the callee left, the agent right where it played, as long as the call", async () => {
    const { s, runId } = await echoCall("twilio");
    const callee = await connect("twilio", runId);
    const speech = calleeSpeech(8000);
    const said = speech.samples.subarray(speech.at, speech.at + 160 * 50);
    callee.speak(said);
    for (let i = 0; i < 25; i++) callee.silence(20);
    const heardFrames = Array.from({ length: 50 }, (_, k) => said.subarray(k * 160, (k + 1) * 160)).filter((f) =>
      isVoiced(fromWire({ codec: "mulaw", rate: 8000 }, toWire({ codec: "mulaw", rate: 8000 }, f))),
    ).length;
    await callee.until(() => callee.received.length >= heardFrames);
    callee.hangup();
    await callee.until(() => callee.closed !== null);

    const run = await runApi(s, runId);
    expect(run.recording_url).toMatch(new RegExp(`^http://edgedial\\.test/api/v1/recordings/${runId}\\?expires=\\d+&signature=[0-9a-f]{64}$`));
    const res = await exports.default.fetch(new Request(run.recording_url));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("audio/wav");
    const bytes = new Uint8Array(await res.arrayBuffer());
    const wav = readWav(bytes);
    expect(wav).toMatchObject({ rate: 8000, channels: 2 });
    // 75 frames of 20 ms: the call's length by its audio clock.
    expect(wav.samples.length).toBe(75 * 160 * 2);
    // Stored as μ-law, a byte per channel: half the bytes of the 16-bit PCM it is served as, the length exact.
    const stored = await env.UPLOADS.head((await runRow(runId)).recordingKey!);
    expect(stored?.key).toMatch(/\.ulaw$/);
    expect(stored?.size).toBe(75 * 160 * 2);
    expect(Number(res.headers.get("content-length"))).toBe(bytes.length);
    expect(bytes.length).toBe(44 + 75 * 160 * 4);
    const left = wav.samples.filter((_, i) => i % 2 === 0);
    const right = wav.samples.filter((_, i) => i % 2 === 1);
    // The callee's side is what the carrier sent (decoded); the echo plays one frame later on the agent's side.
    expect([...left.subarray(0, 160 * 50)]).toEqual([...fromWire({ codec: "mulaw", rate: 8000 }, toWire({ codec: "mulaw", rate: 8000 }, said))]);
    // ...which is the PCM the test spoke within G.711's step (about a sixteenth of each sample's magnitude).
    for (let i = 0; i < said.length; i++) expect(Math.abs(left[i] - said[i])).toBeLessThanOrEqual(Math.abs(said[i]) / 16 + 8);
    const voicedLeft = Array.from({ length: 50 }, (_, k) => k).filter((k) => isVoiced(left.subarray(k * 160, (k + 1) * 160)));
    for (const k of voicedLeft) expect([...right.subarray((k + 1) * 160, (k + 2) * 160)]).toEqual([...left.subarray(k * 160, (k + 1) * 160)]);
    expect(rms(right.subarray(160 * 60))).toBe(0);

    // The link is the only key: a changed signature or an expired link is refused.
    const forged = run.recording_url.replace(/signature=[0-9a-f]/, (m: string) => (m.endsWith("0") ? m.slice(0, -1) + "1" : m.slice(0, -1) + "0"));
    expect((await exports.default.fetch(new Request(forged))).status).toBe(403);
    const expired = run.recording_url.replace(/expires=\d+/, "expires=1000");
    expect((await exports.default.fetch(new Request(expired))).status).toBe(403);
    expect((await exports.default.fetch(new Request(run.recording_url.split("?")[0]))).status).toBe(403);

    // Deleting it: another organization gets a 404 and deletes nothing; the owner's delete removes the file, the
    // link stops working, and the run keeps its transcript.
    const path = `/api/v1/workflow/${s.agent.id}/runs/${runId}/recording`;
    const stranger = await createOrg();
    expect((await call("DELETE", path, { key: stranger.key })).status).toBe(404);
    const key = (await runRow(runId)).recordingKey!;
    expect(await env.UPLOADS.head(key)).not.toBeNull();
    expect((await call("DELETE", path, { key: s.org.key })).status).toBe(204);
    expect(await env.UPLOADS.head(key)).toBeNull();
    expect((await exports.default.fetch(new Request(run.recording_url))).status).toBe(404);
    const after = await runApi(s, runId);
    expect(after.recording_url).toBeNull();
    expect(after.transcript).toEqual(run.transcript);
    expect(await call("DELETE", path, { key: s.org.key })).toMatchObject({ status: 404, json: { detail: "Recording not found" } });
  });

  it("a recording stored before μ-law (raw 16-bit PCM under a .pcm key) is still served as the same WAV", async () => {
    const { s, runId } = await echoCall("twilio");
    const pcm = Int16Array.from({ length: 160 * 2 * 3 }, (_, i) => (i % 2 ? -1 : 1) * ((i * 97) % 30000));
    const key = `recordings/${s.org.id}/${runId}.pcm`;
    await env.UPLOADS.put(key, pcm16ToBytes(pcm));
    await getDb(env).update(workflowRuns).set({ recordingKey: key, recordingRate: 8000 }).where(eq(workflowRuns.id, runId)).run();
    const res = await exports.default.fetch(new Request((await runApi(s, runId)).recording_url));
    expect(res.status).toBe(200);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(Number(res.headers.get("content-length"))).toBe(44 + pcm.length * 2);
    expect(bytes.length).toBe(44 + pcm.length * 2);
    const wav = readWav(bytes);
    expect(wav).toMatchObject({ rate: 8000, channels: 2 });
    expect([...wav.samples]).toEqual([...pcm]); // byte for byte, not through μ-law
  });

  it("an organization that turned recording off (record_calls: false) gets no recording and no link", async () => {
    const s = await setup("twilio");
    const off = await call("PUT", "/api/v1/organizations/calling-policy", { key: s.org.key, body: { record_calls: false } });
    expect(off.status, off.text).toBe(200);
    expect(off.json.record_calls).toBe(false);
    const runId = await startCall(s);
    await callSessionStub(env, runId).prepare({ agent: "echo" });
    const callee = await connect("twilio", runId);
    callee.silence(200);
    callee.hangup();
    await callee.until(() => callee.closed !== null);
    expect((await runApi(s, runId)).recording_url).toBeNull();
    expect(await env.UPLOADS.list({ prefix: `recordings/${s.org.id}/${runId}.` })).toMatchObject({ objects: [] });
  });
});

describe("Telnyx with a voice agent set", () => {
  it("asks for a bidirectional μ-law stream on dial, and on answer sends no speak command", async () => {
    const s = await setup("telnyx");
    const live = { ...env, VOICE_AGENT: "echo" };
    const ctx = createExecutionContext();
    const started = await worker.fetch(
      new Request(`http://edgedial.test/api/v1/public/agent/${s.agent.workflow_uuid}`, {
        method: "POST",
        headers: { "X-API-Key": s.org.key, "Content-Type": "application/json" },
        body: JSON.stringify({ phone_number: "+14155550123", initial_context: { first_name: "Ada" } }),
      }),
      live,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(started.status).toBe(200);
    const runId = ((await started.json()) as { workflow_run_id: number }).workflow_run_id;
    const dial = (await simRequests(s.acct)).find((r) => r.method === "POST" && r.path.endsWith("/v2/calls"))!;
    expect(JSON.parse(dial.body)).toMatchObject({
      stream_url: expect.stringMatching(new RegExp(`^ws://edgedial\\.test/api/v1/telephony/telnyx/stream/${runId}/\\d+\\.[0-9a-f]{32}\\.[0-9a-f]{64}$`)),
      stream_track: "inbound_track",
      stream_bidirectional_mode: "rtp",
      stream_bidirectional_codec: "PCMU",
    });
    const callId = (await runRow(runId)).providerCallId!;
    const before = (await simRequests(s.acct)).length;
    for (const cb of (await play(callId, "answered")).filter((c) => c.kind === "status").slice(0, 2)) {
      const c2 = createExecutionContext();
      const res = await worker.fetch(new Request(cb.url, { method: cb.method, headers: cb.headers, body: cb.body }), live, c2);
      await waitOnExecutionContext(c2);
      expect(res.status).toBeLessThan(300);
    }
    expect((await simRequests(s.acct)).slice(before).filter((r) => /actions\/speak/.test(r.path))).toEqual([]);
    expect((await runRow(runId)).status).toBe("in_progress");
  });
});

describe("the simulator finds the stream an answer document connects", () => {
  it("in TwiML/CXML, Plivo XML and an NCCO; nothing in a speaking document", () => {
    const url = "wss://edgedial.test/api/v1/telephony/x/stream/7/ab&cd";
    for (const provider of ["twilio", "cloudonix", "plivo", "vobiz", "vonage"] as const) {
      expect(streamUrlIn(getProvider(provider).calls!.mediaDocument!(url).body)).toBe(url);
      expect(streamUrlIn(getProvider(provider).calls!.answerDocument("Hello").body)).toBeNull();
    }
  });
});

describe("Vonage's WebSocket control messages, as its WebSocket guide documents them", () => {
  it("a mark is a notify carrying the name, read back from websocket:notify; clear is the clear action", () => {
    const media = getProvider("vonage").calls!.media!;
    expect(JSON.parse(media.mark!("say-3", ""))).toEqual({ action: "notify", payload: { name: "say-3" } });
    expect(JSON.parse(media.clear!(""))).toEqual({ action: "clear" });
    expect(media.parse(JSON.stringify({ event: "websocket:notify", payload: { name: "say-3" } }))).toEqual([{ kind: "mark", name: "say-3" }]);
    // The clear's acknowledgement and a notify that is not ours mean nothing to the session.
    expect(media.parse(JSON.stringify({ event: "websocket:cleared" }))).toEqual([]);
    expect(media.parse(JSON.stringify({ event: "websocket:notify", payload: { other: 1 } }))).toEqual([]);
  });
});
