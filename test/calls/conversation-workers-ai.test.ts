// The deployed voice agent's path, with nothing prepared: the deployment's VOICE_AGENT (wrangler.jsonc:
// "conversation") picks the conversation agent, and the agent's settings (none: the defaults) pick its engines, the
// real Workers AI classes on the AI binding. Workers AI is faked at the binding boundary only: the binding answers
// the chat model in its streamed wire shape (keyed by the conversation, as the seats script is), speaks each sentence
// as PCM, and transcribes each turn over the Deepgram live socket it opens for `websocket: true`, recognizing the
// callee's committed clips. Every other conversation test prepares deterministic engines (`scripted`) instead.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { parse } from "jsonc-parser";
import { describe, expect, it } from "vitest";
import config from "../../wrangler.jsonc?raw";
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import { WORKERS_AI_STT_MODEL, WORKERS_AI_TTS_MODEL, WORKERS_AI_TURN_MODEL } from "../../src/agent/workers-ai-speech";
import { callSessionStub } from "../../src/calls/session/stub";
import { fromWire } from "../../src/dev/simulator/media/callee";
import { isVoiced } from "../../src/lib/audio/level";
import { runWhen, SEATS_DISPOSITIONS, seatsConversation, startSeatsCall } from "./conversation-support";
import { FakeWorkersAi, toneMs } from "./fake-workers-ai";
import { connect } from "./media-support";
import { setup } from "./support";

const vars = (parse(config) as { vars: Record<string, string> }).vars;
describe("the deployed voice agent (engines from the agent's settings, Workers AI on the AI binding)", () => {
  it("holds the seats conversation: the model is asked with the callee's words, its replies are spoken to the callee", async () => {
    expect(vars.VOICE_AGENT).toBe("conversation");
    const s = await setup("twilio");
    // The seats agent with no voice_agent settings: the deployment's default engines.
    const { runId, agentId } = await startSeatsCall(s, { call_disposition_codes: SEATS_DISPOSITIONS });

    // The session as deployed: the deployment's VOICE_AGENT and an AI binding (the fake). Nothing is prepared.
    const ai = new FakeWorkersAi();
    await runInDurableObject(callSessionStub(env, runId), (instance) => {
      const o = instance as unknown as { env: Env };
      o.env = { ...o.env, VOICE_AGENT: vars.VOICE_AGENT, AI: ai } as unknown as Env;
    });
    const callee = await connect("twilio", runId);

    const greetingFrames = await seatsConversation(callee);

    // The model was asked, with what the callee said; the engines were the Workers AI defaults.
    const models = new Set(ai.asked.map((a) => a.model));
    // The turn-detection model was asked at pauses too; this binding has none (it throws), so the silence bound ended the turns.
    expect(models).toEqual(new Set([WORKERS_AI_CHAT_MODEL, WORKERS_AI_TTS_MODEL, WORKERS_AI_STT_MODEL, WORKERS_AI_TURN_MODEL]));
    expect(ai.asked.filter((a) => a.model === WORKERS_AI_STT_MODEL).every((a) => (a.options as { websocket?: boolean })?.websocket)).toBe(true);
    const userWords = ai.chats.map((m) => m.filter((x) => x.role === "user").map((x) => x.content));
    expect(userWords.flat()).toEqual(expect.arrayContaining(["Sure, tell me more.", "We need twelve seats."]));
    expect(ai.transcribed).toEqual(expect.arrayContaining(["Sure, tell me more.", "We need twelve seats."]));
    expect(ai.spoken).toEqual(["Hi Ada!", "Great.", "How many seats do you need?", "Thank you, goodbye!"]);

    // The agent's voice reached the callee: the greeting, then the replies after the callee spoke, about as long as spoken.
    const voiced = callee.received.filter((f) => isVoiced(fromWire({ codec: "mulaw", rate: 8000 }, f))).length;
    const spokenFrames = ai.spoken.reduce((n, t) => n + toneMs(t) / 20, 0);
    expect(voiced).toBeGreaterThanOrEqual(spokenFrames - 10);
    const afterGreeting = callee.received.slice(greetingFrames).filter((f) => isVoiced(fromWire({ codec: "mulaw", rate: 8000 }, f))).length;
    expect(afterGreeting).toBeGreaterThanOrEqual((toneMs("Great.") + toneMs("How many seats do you need?") + toneMs("Thank you, goodbye!")) / 20 - 10);

    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("agent_hangup");
    expect(snap.turns.map((t) => [t.role, t.text])).toEqual([
      ["agent", "Hi Ada!"],
      ["callee", "Sure, tell me more."],
      ["agent", "Great. How many seats do you need?"],
      ["callee", "We need twelve seats."],
      ["agent", "Thank you, goodbye!"],
    ]);
    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length, 100);
    expect(run.transcript.map((t: { text: string }) => t.text)).toEqual(snap.turns.map((t) => t.text));
    expect(run.gathered_context).toEqual({ seats: 12 });
    expect(run.disposition).toBe("interested");
  });
});
