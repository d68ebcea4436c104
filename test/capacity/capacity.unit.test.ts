// The engine budgets, the per-call demand model and the ledger's rule: pure, in Node.
import { describe, expect, it } from "vitest";
import { budgetOf, callBudgetOf, orgBudgetOf, parseEngineLimits, type EngineLimits } from "../../src/capacity/budgets";
import { analysisEngine, callDemand, callsThatFit, sumDemand, type DefaultModels } from "../../src/capacity/demand";
import { blockingEngine, spareRpm, type Held } from "../../src/capacity/ledger";

const DEFAULTS: DefaultModels = {
  llm: "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
  stt: "@cf/deepgram/nova-3",
  tts: "@cf/deepgram/aura-1",
  turn: "@cf/pipecat-ai/smart-turn-v2",
};
const LLM = `workers-ai:text-generation:${DEFAULTS.llm}`;

describe("engine budgets", () => {
  it("default to Workers AI's documented per-account limits, per task and for the models named below their task's", () => {
    expect(budgetOf({}, LLM)).toEqual({ rpm: 300, streams: null });
    expect(budgetOf({}, "workers-ai:text-generation:@cf/qwen/qwen1.5-14b-chat-awq").rpm).toBe(150);
    expect(budgetOf({}, "workers-ai:asr:@cf/openai/whisper").rpm).toBe(720);
    expect(budgetOf({}, "workers-ai:tts:@cf/deepgram/aura-1").rpm).toBe(720);
    // A bring-your-own-key provider is unlimited unless configured.
    expect(budgetOf({}, "deepgram:asr:nova-3")).toEqual({ rpm: null, streams: null });
  });

  it("are overridden by the most specific line of ENGINE_LIMITS", () => {
    const r = parseEngineLimits(
      JSON.stringify({ engines: { "workers-ai:text-generation": { rpm: 600 }, [LLM]: { rpm: 240 }, deepgram: { streams: 50 } }, call_share: 1 }),
    );
    expect(r.ok).toBe(true);
    const limits = (r as { limits: EngineLimits }).limits;
    expect(budgetOf(limits, LLM).rpm).toBe(240);
    expect(budgetOf(limits, "workers-ai:text-generation:@cf/other").rpm).toBe(600);
    expect(budgetOf(limits, "deepgram:asr:nova-3")).toEqual({ rpm: null, streams: 50 });
    expect(callBudgetOf(limits, LLM).rpm).toBe(240);
  });

  it("keep 10% of each budget from calls by default, and share it out per organization", () => {
    expect(callBudgetOf({}, LLM).rpm).toBe(270);
    const limits: EngineLimits = { organizations: { "7": { share: 0.5 }, "8": { engines: { [LLM]: { rpm: 24 } } } } };
    expect(orgBudgetOf(limits, 7, LLM).rpm).toBe(135);
    expect(orgBudgetOf(limits, 8, LLM).rpm).toBe(24);
    expect(orgBudgetOf(limits, 9, LLM).rpm).toBe(270);
  });

  it("refuse an unreadable ENGINE_LIMITS with a message naming the field (empty is no override)", () => {
    expect(parseEngineLimits("")).toEqual({ ok: true, limits: {} });
    expect(parseEngineLimits("{nope").ok).toBe(false);
    const bad = parseEngineLimits(JSON.stringify({ engines: { x: { rpm: -1 } } }));
    expect(bad.ok === false && bad.error).toContain("engines.x.rpm");
    expect(parseEngineLimits(JSON.stringify({ organizations: { "7": { share: 2 } } })).ok).toBe(false);
  });
});

describe("a call's engine demand", () => {
  it("for the default agent: a model turn every 5 s, Nova-3's one stream, Smart Turn per turn, two sentences of speech per turn", () => {
    expect(callDemand({}, DEFAULTS)).toEqual({
      [LLM]: { rpm: 12, streams: 0 },
      "workers-ai:asr:@cf/deepgram/nova-3": { rpm: 1, streams: 1 },
      "workers-ai:turn:@cf/pipecat-ai/smart-turn-v2": { rpm: 12, streams: 0 },
      "workers-ai:tts:@cf/deepgram/aura-1": { rpm: 24, streams: 0 },
    });
  });

  it("charges speculative replies when Flux's eager end of turn is on, and not when it is off", () => {
    const flux = (eager: unknown) => ({
      voice_agent: { stt: { provider: "workers-ai", model: "@cf/deepgram/flux", ...(eager === undefined ? {} : { eager_eot_threshold: eager }) } },
    });
    expect(callDemand(flux(undefined), DEFAULTS)[LLM].rpm).toBe(18);
    expect(callDemand(flux(0.5), DEFAULTS)[LLM].rpm).toBe(18);
    expect(callDemand(flux(null), DEFAULTS)[LLM].rpm).toBe(12);
    // Flux ends turns itself: no Smart Turn beside it.
    expect(Object.keys(callDemand(flux(null), DEFAULTS)).some((k) => k.includes(":turn:"))).toBe(false);
  });

  it("keys other providers by provider, task and model; scripted engines need nothing", () => {
    const d = callDemand(
      {
        voice_agent: {
          llm: { provider: "openai", base_url: "https://x.test/v1", model: "gpt-4o-mini" },
          stt: { provider: "deepgram", model: "nova-3" },
          tts: { provider: "scripted" },
        },
      },
      DEFAULTS,
    );
    expect(d).toEqual({ "openai:text-generation:gpt-4o-mini": { rpm: 12, streams: 0 }, "deepgram:asr:nova-3": { rpm: 1, streams: 1 } });
    expect(analysisEngine({ voice_agent: { llm_model: "@cf/qwen/qwen1.5-14b-chat-awq" } }, DEFAULTS)).toBe(
      "workers-ai:text-generation:@cf/qwen/qwen1.5-14b-chat-awq",
    );
    expect(analysisEngine({ voice_agent: { llm: { provider: "scripted", script: [] } } }, DEFAULTS)).toBeNull();
  });

  it("gives how many calls fit: the default deployment holds about 20 of the default agent (the model is scarcest)", () => {
    const d = callDemand({}, DEFAULTS);
    expect(callsThatFit(d, (k) => callBudgetOf({}, k))).toBe(22);
    const flux = callDemand({ voice_agent: { stt: { provider: "workers-ai", model: "@cf/deepgram/flux" } } }, DEFAULTS);
    expect(callsThatFit(flux, (k) => callBudgetOf({}, k))).toBe(15);
    expect(callsThatFit(d, (k) => callBudgetOf({}, k), sumDemand([d, d]))).toBe(20);
  });
});

describe("the ledger", () => {
  const d = callDemand({}, DEFAULTS);
  const limits: EngineLimits = { engines: { [LLM]: { rpm: 240 } }, call_share: 1, organizations: { "2": { share: 0.25 } } };
  const held = (n: number, orgId = 1): Held[] => Array.from({ length: n }, () => ({ orgId, demand: d }));

  it("admits calls up to the scarcest engine's budget and names the engine that refuses the next", () => {
    expect(blockingEngine(limits, held(19), 1, d)).toBeNull();
    expect(blockingEngine(limits, held(20), 1, d)).toEqual({ engine: LLM, scope: "deployment" });
  });

  it("holds an organization to its share", () => {
    // A quarter of 240 rpm: five calls of 12.
    expect(blockingEngine(limits, held(4, 2), 2, d)).toBeNull();
    expect(blockingEngine(limits, held(5, 2), 2, d)).toEqual({ engine: LLM, scope: "organization" });
    expect(blockingEngine(limits, held(5, 2), 1, d)).toBeNull();
  });

  it("admits a call with no demand always, and leaves what held calls do not use for analysis", () => {
    expect(blockingEngine(limits, held(100), 1, {})).toBeNull();
    expect(spareRpm(300, held(20), LLM)).toBe(60);
    expect(spareRpm(300, held(30), LLM)).toBe(0);
    expect(spareRpm(null, held(30), LLM)).toBeNull();
  });
});
