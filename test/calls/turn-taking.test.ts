// Turn-taking on a live call through the simulator's media streams (Twilio's protocol): what the callee heard of an
// interrupted reply stays, to the word, in the transcript and in the model's next request.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { heardWords } from "../../src/agent/heard";
import type { ChatRequest } from "../../src/agent/chat";
import { TONE_MS_PER_CHAR } from "../../src/agent/clip-speech";
import { callSessionStub } from "../../src/calls/session/stub";
import type { CalleeStream } from "../../src/dev/simulator/media/callee";
import type { KnownClip } from "../../src/agent/clip-speech";
import { conversationCall, listen, listenUntil, SEATS, startSeatsCall, SURE } from "./conversation-support";
import { connect } from "./media-support";
import { setup } from "./support";

const LONG = "The conference runs for three days in Lisbon, with talks on every kind of voice agent you can imagine.";
const SCRIPT = [
  { user: "tell me more", say: LONG },
  { user: "twelve seats", say: "Twelve seats, noted." },
];

/** The model's requests so far, read in the call's session (the scripted model keeps them). */
async function modelRequests(runId: number): Promise<ChatRequest[]> {
  return runInDurableObject(callSessionStub(env, runId), (o) => (o as any).live.agent.engines.model.requests as ChatRequest[]);
}

/** The callee speaks in real time (a frame, then the session's turn), so what it plays keeps pace; `until`: stop early. */
async function talk(callee: CalleeStream, samples: Int16Array, until = () => false) {
  for (let i = 0; i < samples.length && !until(); i += 160) {
    callee.speak(samples.subarray(i, i + 160));
    await new Promise((r) => setTimeout(r, 0));
  }
}

/** How much of the agent's audio the callee has heard (received, less what a clear dropped unplayed), in ms. */
const heardMs = (callee: CalleeStream) => callee.received.reduce((n, p) => n + p.length / 8, 0) - callee.droppedMs;

describe("barge-in keeps what was heard", () => {
  it("a real interruption mid-sentence keeps exactly the heard words in the transcript and the model's next request", async () => {
    const s = await setup("twilio");
    const { runId, callee } = await conversationCall(s, SCRIPT);
    await listenUntil(callee, () => callee.played.length >= 1);
    const greetingMs = heardMs(callee);
    await listen(callee, 200);
    callee.speak(SURE.samples);
    // About 2 s into the reply (one sentence, 60 ms a character), the callee talks over it.
    await listenUntil(callee, () => heardMs(callee) - greetingMs >= 2000);
    // What the callee's side had played of the reply when the clear came, to the frame (the clear dropped the rest).
    let played = -1;
    await talk(callee, SEATS.samples, () => {
      if (callee.clears && played < 0) played = heardMs(callee) - greetingMs;
      return false;
    });
    await listenUntil(callee, () => callee.clears > 0);
    await listenUntil(callee, () => callee.played.length >= 2, 5000);
    const snap = await callSessionStub(env, runId).snapshot();
    const cut = snap.turns.find((t) => t.interrupted);
    // The agent's account of it (its audio clock) matches what the callee played within a frame or three.
    const durMs = LONG.length * TONE_MS_PER_CHAR;
    const candidates = new Set([-60, -40, -20, 0, 20, 40, 60].map((d) => heardWords(LONG, played + d, durMs)));
    expect(cut?.role).toBe("agent");
    expect(cut!.text.split(" ").length).toBeGreaterThanOrEqual(5);
    expect(LONG.startsWith(cut!.text)).toBe(true);
    expect([...candidates]).toContain(cut!.text);
    // The model's next request has the assistant turn with exactly those words, then the callee's.
    const requests = await modelRequests(runId);
    const next = requests.at(-1)!.messages.filter((m) => m.role !== "system");
    expect(next.slice(-3).map((m) => [m.role, m.content])).toEqual([
      ["user", "Sure, tell me more."],
      ["assistant", cut!.text],
      ["user", "We need twelve seats."],
    ]);
  });
});

/** Voice-like bursts (a 200 Hz buzz) of these lengths in ms, with `gapMs` of quiet between: an "uh-huh", a cough. */
function bursts(lengths: number[], gapMs = 80, noise = false): Int16Array {
  const parts: number[] = [];
  lengths.forEach((ms, k) => {
    if (k) for (let i = 0; i < gapMs * 8; i++) parts.push(0);
    for (let i = 0; i < ms * 8; i++)
      parts.push(noise ? Math.round((Math.random() * 2 - 1) * 9000) : Math.round(7000 * Math.sin((2 * Math.PI * 200 * i) / 8000)));
  });
  return Int16Array.from(parts);
}

/** A call where the agent's reply is one long sentence; `clips`: more of what the callee's speech engine knows. */
async function longReply(clips: KnownClip[] = []) {
  const s = await setup("twilio");
  const { runId } = await startSeatsCall(s);
  await callSessionStub(env, runId).prepare({ agent: "conversation", scripted: { script: SCRIPT, clips: [SURE, SEATS, ...clips], ttsFailsOn: [] } });
  const callee = await connect("twilio", runId);
  await listenUntil(callee, () => callee.played.length >= 1);
  const greetingMs = heardMs(callee);
  await listen(callee, 200);
  callee.speak(SURE.samples);
  await listenUntil(callee, () => heardMs(callee) - greetingMs >= 1500);
  return { runId, callee };
}

/** The reply as the transcript has it once it was heard to its end. */
async function replyTurn(runId: number, callee: CalleeStream) {
  for (let waited = 0; ; waited += 200) {
    const snap = await callSessionStub(env, runId).snapshot();
    const reply = snap.turns.find((t) => t.role === "agent" && t.text.startsWith("The conference"));
    if (reply || waited >= 10_000) return { snap, reply };
    await listen(callee, 200);
  }
}

/** The agent's audio stops (a clear); how long, on the callee's clock, until it comes again. */
async function pausedFor(callee: CalleeStream): Promise<number> {
  await listenUntil(callee, () => callee.clears > 0);
  const [pausedAt, frames] = [callee.clockMs, callee.received.length];
  await listenUntil(callee, () => callee.received.length > frames);
  return callee.clockMs - pausedAt;
}

describe("interruptions that feel human", () => {
  it("a short uh-huh during the agent's sentence does not stop it", async () => {
    const { runId, callee } = await longReply();
    // 220 ms of voice (at most 260 ms once cut into the session's 20 ms frames): under the 300 ms that pauses it.
    await talk(callee, bursts([100, 120]));
    const { snap, reply } = await replyTurn(runId, callee);
    expect(callee.clears).toBe(0);
    expect([reply?.text, !!reply?.interrupted]).toEqual([LONG, false]);
    expect((await modelRequests(runId)).length).toBe(1);
    expect(snap.turns.filter((t) => t.role === "callee").map((t) => t.text)).toEqual(["Sure, tell me more."]);
  });

  it("a longer uh-huh pauses the agent; its words are a backchannel, so the sentence goes on within 2 s, and the model is not asked", async () => {
    const UHHUH: KnownClip = { text: "Uh-huh.", samples: bursts([200, 260], 100), rate: 8000 };
    const { runId, callee } = await longReply([UHHUH]);
    await talk(callee, UHHUH.samples);
    expect(await pausedFor(callee)).toBeLessThanOrEqual(2000);
    const { snap, reply } = await replyTurn(runId, callee);
    expect([reply?.text, !!reply?.interrupted]).toEqual([LONG, false]);
    expect(snap.turns.map((t) => [t.role, t.text])).toContainEqual(["callee", "Uh-huh."]);
    // The model heard nothing new: no request after the one that made the reply.
    expect((await modelRequests(runId)).length).toBe(1);
  });

  it("a cough then silence: the agent stops, then resumes its sentence within 2 s from the word it was on", async () => {
    const { runId, callee } = await longReply();
    await talk(callee, bursts([400], 0, true));
    expect(await pausedFor(callee)).toBeLessThanOrEqual(2000);
    const { snap, reply } = await replyTurn(runId, callee);
    expect([reply?.text, !!reply?.interrupted]).toEqual([LONG, false]);
    expect(snap.turns.filter((t) => t.interrupted)).toEqual([]);
    expect((await modelRequests(runId)).length).toBe(1);
  });
});

describe("the jitter buffer on the way out", () => {
  it("the session stalled for 300 ms mid-sentence: the callee's side hears no gap; the sentence plays to its end", async () => {
    const { runId, callee } = await longReply();
    // The audio the carrier holds ahead of the callee's clock: the bounded lead (400 ms), not a few frames.
    expect(callee.unplayedMs).toBeGreaterThanOrEqual(300);
    const sent = callee.received.length;
    // The fault: the callee's line plays on for 300 ms while the session sends nothing (its frames reach the session
    // in one burst afterwards, as after a stall of the runtime). Checked frame by frame: audio was playing throughout.
    const quiet: number[] = [];
    for (let i = 0; i < 15; i++) {
      callee.silence(20);
      if (callee.unplayedMs <= 0) quiet.push(callee.clockMs);
    }
    expect(callee.received.length).toBe(sent);
    expect(quiet).toEqual([]);
    const { reply } = await replyTurn(runId, callee);
    expect([reply?.text, !!reply?.interrupted]).toEqual([LONG, false]);
  });
});
