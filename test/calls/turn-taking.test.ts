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
import { conversationCall, listen, listenUntil, SEATS, SURE } from "./conversation-support";
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
    callee.speak(SEATS.samples);
    await listenUntil(callee, () => callee.clears > 0);
    // What the callee's side played of the reply, to the frame (the clear dropped the rest).
    const played = heardMs(callee) - greetingMs;
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
