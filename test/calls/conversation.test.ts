// A whole conversation through a call session, with the simulator playing the callee over Twilio's media protocol:
// the agent's greeting, the callee's answer (a committed espeak-ng clip, recognized by the clip engine), an edge
// chosen by the scripted model, the second node's question, the callee's answer with a number to extract, the
// endCall goodbye with a disposition, and the hang-up once it was heard. Then barge-in and the silent callee.
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { callSessionStub } from "../../src/calls/session/stub";
import type { CalleeStream } from "../../src/dev/simulator/media/callee";
import { fromWire } from "../../src/dev/simulator/media/callee";
import { rms } from "../../src/lib/audio/level";
import { Resampler } from "../../src/lib/audio/resample";
import { readWav, wavFile } from "../../src/lib/audio/wav";
import { seedCampaign, setupOrg } from "../campaigns/support";
import { conversationCall, listen, listenLive, listenUntil, MACHINE, runWhen, SCRIPT, SEATS, SURE, seatsConversation } from "./conversation-support";
import type { ScriptStep } from "../../src/agent/scripted-model";
import { setup } from "./support";
import { unwrap } from "../../src/campaigns/errors";

/** The callee hears the greeting, answers once, and listens until the call ends: the session's record of it. */
async function answerOnce(callee: CalleeStream, runId: number) {
  await listenUntil(callee, () => callee.played.length >= 1);
  await listen(callee, 200);
  callee.speak(SURE.samples);
  await listenUntil(callee, () => callee.closed !== null);
  return callSessionStub(env, runId).snapshot();
}

describe("a conversation on the media path", () => {
  it("greeting → answer → edge → second node → extraction → endCall with a disposition → hang-up; all of it on the run", async () => {
    const s = await setup("twilio");
    const { runId, callee, agentId } = await conversationCall(s);
    await seatsConversation(callee);

    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("agent_hangup");
    expect(snap.turns.map((t) => [t.role, t.text, !!t.interrupted])).toEqual([
      ["agent", "Hi Ada!", false],
      ["callee", "Sure, tell me more.", false],
      ["agent", "Great. How many seats do you need?", false],
      ["callee", "We need twelve seats.", false],
      ["agent", "Thank you, goodbye!", false],
    ]);
    // Turns follow each other on the call's clock.
    for (let i = 1; i < snap.turns.length; i++) expect(snap.turns[i].startMs).toBeGreaterThanOrEqual(snap.turns[i - 1].startMs);

    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length);
    expect(run.gathered_context).toEqual({ seats: 12 });
    expect(run.disposition).toBe("interested");
    expect(run.transcript.map((t: any) => t.text)).toEqual(snap.turns.map((t) => t.text));
    expect(run.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
    expect(run.usage.stt_seconds).toBeGreaterThan(2.5);
    expect(run.usage.tts_seconds).toBeGreaterThan(2);
  });

  it("the callee talking over the agent stops it at once; only what they heard stays, marked interrupted", async () => {
    const s = await setup("twilio");
    const { runId, callee } = await conversationCall(s, [
      { user: "tell me more", prompt: "Ask Ada", say: "Our offer is long. It has many parts. Let me explain every single one of them now." },
    ]);
    await listenUntil(callee, () => callee.played.length >= 1);
    callee.speak(SURE.samples);
    // The first sentence of the reply is heard, then the callee talks over the second.
    await listenUntil(callee, () => callee.played.length >= 2);
    const before = callee.clears;
    callee.speak(SEATS.samples);
    await listen(callee, 100);
    expect(callee.clears).toBe(before + 1);
    // Their words (not a backchannel) take the turn: what was heard stays, to the word (turn-taking.test.ts has more).
    await listenUntil(callee, () => callee.played.length >= 3);
    const snap = await callSessionStub(env, runId).snapshot();
    const interrupted = snap.turns.find((t) => t.interrupted);
    expect(interrupted).toMatchObject({ role: "agent", text: expect.stringMatching(/^Our offer is long\./) });
    expect("Our offer is long. It has many parts.".startsWith(interrupted!.text)).toBe(true);
  });

  it("a silent callee is asked once whether they are still there (by the wall clock), then the call ends politely, as callee_silent", async () => {
    const s = await setup("twilio");
    const { runId, callee, agentId } = await conversationCall(s, SCRIPT, { configurations: { voice_agent: { turn: { reprompt_after_ms: 2000 } } } });
    await listenUntil(callee, () => callee.played.length >= 1);
    // Audio faster than real time is not silence: the re-prompt waits for the wall clock.
    await listen(callee, 3000);
    expect(callee.marks).toHaveLength(1);
    await listenLive(callee, () => callee.closed !== null);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("callee_silent");
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length);
    expect(run.end_reason).toBe("callee_silent");
    // The run says why in words: the agent's own account (its re-prompt, its goodbye), once, not the session's limit.
    expect(run.notes).toBe(
      "The callee said nothing for 4 s after the agent last spoke (asked 1 time whether they were still there); the agent said goodbye and ended the call",
    );
    expect(snap.turns.map((t) => t.text)).toEqual(["Hi Ada!", "Are you still there?", "It seems this is not a good time. Goodbye!"]);
  });

  it.each([
    ["the model fails (an outage or a timeout)", [{ user: "tell me more", say: "", fail: "The model endpoint answered HTTP 503: overloaded" }], []],
    ["text-to-speech fails on a sentence", SCRIPT, ["Great."]],
  ] as Array<[string, ScriptStep[], string[]]>)("%s: the agent apologises and ends the call, with no long dead air", async (_what, script, ttsFailsOn) => {
    const s = await setup("twilio");
    const { runId, callee, agentId } = await conversationCall(s, script, { ttsFailsOn });
    const snap = await answerOnce(callee, runId);
    expect(snap.endReason).toBe("provider_failure");
    const texts = snap.turns.map((t) => t.text);
    expect(texts[0]).toBe("Hi Ada!");
    expect(texts[1]).toBe("Sure, tell me more.");
    expect(texts[texts.length - 1]).toBe("I'm sorry, I'm having trouble on my side. We'll try you again later. Goodbye!");
    // From the end of the callee's words to the apology: the end-of-turn wait and a frame or two, not dead air.
    const apology = snap.turns[snap.turns.length - 1];
    expect(apology.startMs - snap.turns[1].endMs).toBeLessThanOrEqual(1000);
    // The reason is on the run.
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length);
    expect(run.end_reason).toBe("provider_failure");
    expect(run.notes).toMatch(
      /^The agent ended the call after a provider failure: (The model endpoint answered HTTP 503: overloaded|text-to-speech answered HTTP 503)$/,
    );
  });

  it("a model that never answers: a filler, then at the dead-air limit an apology and the end, with the reason on the run", async () => {
    const s = await setup("twilio");
    const { runId, callee, agentId } = await conversationCall(s, [{ user: "tell me more", stall: true }], {
      configurations: { voice_agent: { turn: { max_wait_ms: 3000 } } },
    });
    await listenUntil(callee, () => callee.played.length >= 1);
    await listen(callee, 200);
    callee.speak(SURE.samples);
    // The filler and the dead-air limit run on the wall clock: the callee listens in real time.
    await listenLive(callee, () => callee.closed !== null);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("dead_air");
    const last = snap.turns[snap.turns.length - 1];
    expect(last.text).toBe("One moment. I'm sorry, I'm having trouble on my side. We'll try you again later. Goodbye!");
    // The filler came 1.5 s after the callee's turn ended (700 ms after their words); the apology (about 4.7 s of
    // speech from the clip engine) started at the configured 3 s limit, not the default 6 s.
    // The turns are on the call's audio clock, the filler's and the limit's timers on the wall clock: a loaded machine
    // that catches the callee's frames up in a burst moves them a frame or two apart (2,180 ms seen beside a CPU hog).
    const calleeEnd = snap.turns[1].endMs;
    expect(last.startMs - calleeEnd).toBeGreaterThanOrEqual(700 + 1500 - 40);
    expect(last.startMs - calleeEnd).toBeLessThanOrEqual(700 + 1500 + 300);
    expect(last.endMs - calleeEnd).toBeGreaterThanOrEqual(700 + 3000 + 4000 - 40);
    expect(last.endMs - calleeEnd).toBeLessThanOrEqual(700 + 3000 + 5500);
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length);
    expect(run.end_reason).toBe("dead_air");
    expect(run.notes).toContain("No reply within 3 s of the callee's turn");
  });

  it.each([
    ["hang_up", undefined],
    ["leave_message", "leave_message"],
  ])("an answering machine recognized by its greeting (voicemail_action %s)", async (action, voicemail_action) => {
    const s = await setup("twilio");
    const { runId, callee, agentId } = await conversationCall(s, SCRIPT, { run: { voicemail_action } });
    await listenUntil(callee, () => callee.played.length >= 1);
    callee.speak(MACHINE.samples);
    await listenUntil(callee, () => callee.closed !== null, 30_000);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("voicemail");
    // Its greeting runs on past a person's opening: decided on the audio, before its words were transcribed.
    const texts = snap.turns.map((t) => [t.role, t.text]);
    // The greeting, again, as the message: after the machine's greeting (this one has no beep) and a moment of quiet.
    expect(texts).toEqual(
      action === "hang_up"
        ? [["agent", "Hi Ada!"]]
        : [
            ["agent", "Hi Ada!"],
            ["agent", "Hi Ada!"],
          ],
    );
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length);
    expect(run.answered_by).toBe("machine_detected");
    expect(run.notes).toContain(action === "hang_up" ? "the call was hung up" : "the greeting was left as a message");
    expect(run.notes).toContain("machine greeting, decided");
    // The model was never asked: a machine gets no conversation.
    expect(run.usage.input_tokens).toBe(0);
  });

  it("a campaign's call: the agent's disposition reaches the campaign, counted on its progress", async () => {
    const s = await setup("twilio");
    const { id, stub } = await seedCampaign(await setupOrg(), { n: 1 });
    const { runId, callee } = await conversationCall(s, SCRIPT, { run: { campaign_id: id } });
    // The campaign's attempt for contact 1 as its object recorded it when it dialed this run.
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec("INSERT INTO attempts (contact_id, attempt, status, run_id, dialed_at) VALUES (1, 1, 'in_flight', ?, 0)", runId);
    });
    await seatsConversation(callee);
    for (let i = 0; i < 50 && !Object.keys(unwrap(await stub.progress()).dispositions).length; i++) await new Promise((r) => setTimeout(r, 20));
    expect(unwrap(await stub.progress()).dispositions).toEqual({ interested: 1 });
  });

  it("a contact's text greeting opens the call in place of the Start node's, and is the message left on a machine", async () => {
    const s = await setup("twilio");
    const override = { type: "text", text: "Hello {{ first_name }}, this is the seats desk." };
    const { runId, callee } = await conversationCall(s, SCRIPT, { run: { greeting_override: override, voicemail_action: "leave_message" } });
    await listenUntil(callee, () => callee.played.length >= 1);
    callee.speak(MACHINE.samples);
    await listenUntil(callee, () => callee.closed !== null, 30_000);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("voicemail");
    expect(snap.turns.map((t) => [t.role, t.text])).toEqual([
      ["agent", "Hello Ada, this is the seats desk."],
      ["agent", "Hello Ada, this is the seats desk."],
    ]);
  });

  it("a contact's audio greeting is played from the store as the opening, then the conversation goes on", async () => {
    const s = await setup("twilio");
    const greeting = readWav(Uint8Array.from(atob(inject("audioClips")["agent-16k.wav"]), (c) => c.charCodeAt(0)));
    const up = await exports.default.fetch(
      new Request("http://edgedial.test/api/v1/greeting-recordings?name=spring", {
        method: "POST",
        headers: { "X-API-Key": s.org.key, "Content-Type": "audio/wav" },
        body: wavFile(greeting.samples, 16000),
      }),
    );
    expect(up.status).toBe(201);
    const { recording_id } = (await up.json()) as { recording_id: string };
    const { runId, callee } = await conversationCall(s, SCRIPT, { run: { greeting_override: { type: "audio", recordingId: recording_id } } });
    await listenUntil(callee, () => callee.played.length >= 1);
    // Everything before the first mark is the recording itself (resampled to Twilio's 8 kHz), not synthesized speech.
    const reference = new Resampler(16000, 8000).convert(greeting.samples);
    const heard = fromWire(callee.protocol.format, callee.receivedWire());
    expect(Math.abs(heard.length - reference.length)).toBeLessThanOrEqual(160);
    expect(rms(heard) / rms(reference)).toBeGreaterThan(0.95);
    expect(rms(heard) / rms(reference)).toBeLessThan(1.05);
    await listen(callee, 300);
    callee.speak(SURE.samples);
    await listenUntil(callee, () => callee.played.length >= 3);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.turns.slice(0, 3).map((t) => [t.role, t.text])).toEqual([
      ["agent", "[audio greeting: spring]"],
      ["callee", "Sure, tell me more."],
      ["agent", "Great. How many seats do you need?"],
    ]);
  });

  it("the carrier's verdict (machine) at connect: no greeting, no conversation, the call ends as voicemail", async () => {
    const s = await setup("twilio");
    const { runId, callee } = await conversationCall(s, SCRIPT, { run: { answered_by: "machine_end_beep" } });
    await listenUntil(callee, () => callee.closed !== null, 5000);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("voicemail");
    expect(snap.turns).toEqual([]);
    expect(callee.marks).toEqual([]);
  });
});
