import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { WORKERS_AI_CHAT_MODEL } from "../../src/agent/workers-ai-model";
import { callSessionStub } from "../../src/calls/session/stub";
import { fakeAiCall, listen, listenLive, listenUntil, runWhen, SEATS, SURE } from "./conversation-support";
import { FakeWorkersAi } from "./fake-workers-ai";

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
const failoverCall = (ai: unknown, voiceAgent: Record<string, unknown>) => fakeAiCall(ai, { workflow_configurations: { voice_agent: voiceAgent } }, 300);

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
