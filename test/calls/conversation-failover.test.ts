// Failover inside the turn on a whole call (docs/failover.md): the agent's primary model is a Workers AI model that
// answers every request with Workers AI's 429 (3040, out of capacity), its fallback another Workers AI model (the fake
// binding's seats model). Every turn is answered by the fallback, and the run's transcript says, turn by turn, which
// model served and each failover. A fallback that is slow as well gets the caller a filler after about a second.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import { callSessionStub } from "../../src/calls/session/stub";
import { listen, listenLive, listenUntil, runWhen, SEATS, SEATS_DISPOSITIONS, SURE, startSeatsCall } from "./conversation-support";
import { FakeWorkersAi } from "./fake-workers-ai";
import { connect } from "./media-support";
import { setup } from "./support";

/** The fake binding, with `primary` out of capacity and the seats model (the fallback) `delayMs` slow to answer first. */
function bindingWith(primary: string, delayMs = 0) {
  const fake = new FakeWorkersAi();
  const asked: string[] = [];
  const ai = {
    async run(model: string, inputs: Record<string, any>, options?: Record<string, unknown>) {
      asked.push(model);
      if (model === primary) throw new Error("InferenceUpstreamError: 3040: Capacity temporarily exceeded, please try again.");
      if (model === WORKERS_AI_CHAT_MODEL && delayMs && !asked.slice(0, -1).includes(model)) await new Promise((r) => setTimeout(r, delayMs));
      return fake.run(model, inputs, options);
    },
  };
  return { fake, ai, asked };
}

/** The seats agent with `voice_agent`, its call's session on the fake binding, heard up to the greeting. */
async function failoverCall(ai: unknown, voiceAgent: Record<string, unknown>) {
  const s = await setup("twilio");
  const { runId, agentId } = await startSeatsCall(s, { call_disposition_codes: SEATS_DISPOSITIONS, workflow_configurations: { voice_agent: voiceAgent } });
  await runInDurableObject(callSessionStub(env, runId), (instance) => {
    const o = instance as unknown as { env: Env };
    o.env = { ...o.env, VOICE_AGENT: "conversation", AI: ai } as unknown as Env;
  });
  const callee = await connect("twilio", runId);
  await listenUntil(callee, () => callee.played.length >= 1);
  await listen(callee, 300);
  return { s, runId, agentId, callee };
}

const FALLBACK = `workers-ai:${WORKERS_AI_CHAT_MODEL}`;

describe("failover inside the turn (a primary model at its rate limit, a fallback model)", () => {
  it("every turn is answered by the fallback; the run's transcript names the engine and each failover", async () => {
    const primary = "@cf/meta/llama-3.1-8b-instruct";
    const { fake, ai, asked } = bindingWith(primary);
    // A cool-down after 20 failures: every request of this call tries the primary first (the cool-down is unit-tested).
    const { s, runId, agentId, callee } = await failoverCall(ai, {
      llm: { provider: "workers-ai", model: primary },
      llm_fallbacks: [{ provider: "workers-ai" }],
      failover: { cool_down_after: 20 },
    });
    callee.speak(SURE.samples);
    await listenUntil(callee, () => callee.played.length >= 3);
    await listen(callee, 300);
    callee.speak(SEATS.samples);
    await listenUntil(callee, () => callee.closed !== null);

    // The conversation went as without failover, to its end: nothing was lost to the 429s.
    expect(fake.spoken).toEqual(["Hi Ada!", "Great.", "How many seats do you need?", "Thank you, goodbye!"]);
    const snap = await callSessionStub(env, runId).snapshot();
    expect(snap.endReason).toBe("agent_hangup");
    const primaryAsked = asked.filter((m) => m === primary).length;
    expect(primaryAsked).toBe(asked.filter((m) => m === WORKERS_AI_CHAT_MODEL).length);
    expect(primaryAsked).toBeGreaterThanOrEqual(2);

    const run = await runWhen(s, agentId, runId, (r) => !!r.transcript?.length, 100);
    const replies = run.transcript.filter((t: { role: string; text: string }) => t.role === "agent" && t.text !== "Hi Ada!");
    expect(replies.map((t: { text: string }) => t.text)).toEqual(["Great. How many seats do you need?", "Thank you, goodbye!"]);
    const failover = `llm workers-ai:${primary} → ${FALLBACK} (429)`;
    let listed = 0;
    for (const t of replies) {
      expect(t.timing.llm_engine).toBe(FALLBACK);
      expect(t.timing.failovers.split("; ").every((f: string) => f === failover)).toBe(true);
      expect(t.timing.failover_count).toBe(t.timing.failovers.split("; ").length);
      listed += t.timing.failover_count;
    }
    // Every request the primary refused is listed once, on the turn it delayed.
    expect(listed).toBe(primaryAsked);
    expect(run.disposition).toBe("interested");
  });

  it("a reply late because of failover gets the filler after about a second, not after filler_after_ms", async () => {
    const primary = "@cf/meta/llama-3.2-3b-instruct";
    // The fallback's first answer takes 2 s (the reply's text comes after its second request, at once); the agent's
    // own filler would wait 5 s, so only failover's sooner filler can play before the reply.
    const { fake, ai } = bindingWith(primary, 2000);
    const { callee } = await failoverCall(ai, {
      llm: { provider: "workers-ai", model: primary },
      llm_fallbacks: [{ provider: "workers-ai" }],
      failover: { cool_down_after: 20 },
      turn: { filler_after_ms: 5000, max_wait_ms: 10_000 },
    });
    callee.speak(SURE.samples);
    await listenLive(callee, () => fake.spoken.includes("How many seats do you need?"), 30_000);
    expect(fake.spoken.slice(0, 4)).toEqual(["Hi Ada!", "One moment.", "Great.", "How many seats do you need?"]);
  }, 60_000);
});
