// The per-call demand model: what one call in conversation asks of each engine its agent uses, read from the
// agent's stored `voice_agent` settings. Pure. The figures are estimates of a conversation's pace, kept here in one
// place (docs/capacity.md explains them); budgets divided by them give how many calls fit.
import { isObject } from "../lib/helpers";
import type { EngineBudget, EngineKey } from "./budgets";

/** One turn of the conversation every this many seconds: the model is asked about every 4-6 s. */
export const TURN_SECONDS = 5;
const TURNS_PER_MINUTE = 60 / TURN_SECONDS;
/** A reply started ahead on an eager end of turn (Flux) is thrown away this often: the model is asked again. */
export const SPECULATIVE_SHARE = 0.5;
/** The agent speaks a reply sentence by sentence: one text-to-speech request each. */
export const SENTENCES_PER_TURN = 2;

/** What one call holds of an engine while it lasts: requests per minute, concurrent streams. */
export type EngineDemand = { rpm: number; streams: number };
export type CallDemand = Record<EngineKey, EngineDemand>;

/** The Workers AI models a voice agent uses when its settings name none (the agent module's defaults). */
export type DefaultModels = { llm: string; stt: string; tts: string; turn: string };

const str = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);

/** A part of the settings (`llm`, `stt`, `tts`) as provider and model; the first form (`llm_model`…) is Workers AI. */
function part(
  voice: Record<string, unknown> | null,
  name: "llm" | "stt" | "tts",
  legacyModel: string,
): { provider: string; model?: string; raw: Record<string, unknown> } {
  const p = voice?.[name];
  if (isObject(p) && typeof p.provider === "string") return { provider: p.provider, model: str(p.model), raw: p };
  return { provider: "workers-ai", model: str(voice?.[legacyModel]), raw: {} };
}

/** Deepgram's models on Workers AI stream over one socket; the others take a whole utterance per request. */
const streams = (model: string) => model.startsWith("@cf/deepgram/");
const isFlux = (model: string) => model.startsWith("@cf/deepgram/flux");

function add(demand: CallDemand, key: EngineKey, rpm: number, streamsHeld = 0): void {
  const d = demand[key] ?? { rpm: 0, streams: 0 };
  demand[key] = d;
  d.rpm += rpm;
  d.streams += streamsHeld;
}

/**
 * What one call of an agent with these `workflow_configurations` needs of each engine. Scripted engines (local
 * development) need nothing. A bring-your-own-key provider is keyed by provider, task and model: unlimited unless
 * the deployment gives it a budget.
 */
export function callDemand(configurations: unknown, defaults: DefaultModels): CallDemand {
  const voice = isObject(configurations) && isObject(configurations.voice_agent) ? configurations.voice_agent : null;
  const demand: CallDemand = {};
  const llm = part(voice, "llm", "llm_model");
  const stt = part(voice, "stt", "stt_model");
  const tts = part(voice, "tts", "tts_model");
  const sttModel = stt.model ?? (stt.provider === "workers-ai" ? defaults.stt : "default");
  // Flux says a turn is probably over before it is (eager end of turn, on unless eager_eot_threshold is null): the
  // agent starts a reply ahead, and asks again when the callee goes on.
  const eager = stt.provider === "workers-ai" && isFlux(sttModel) && stt.raw.eager_eot_threshold !== null;
  if (llm.provider !== "scripted") {
    const model = llm.model ?? (llm.provider === "workers-ai" ? defaults.llm : "default");
    add(demand, `${llm.provider}:text-generation:${model}`, TURNS_PER_MINUTE * (eager ? 1 + SPECULATIVE_SHARE : 1));
  }
  if (stt.provider === "workers-ai") {
    // A streaming model holds one socket for the call (one request opens it); the others are asked once a turn, and
    // Smart Turn judges each pause beside them.
    if (streams(sttModel)) add(demand, `workers-ai:asr:${sttModel}`, 1, 1);
    else add(demand, `workers-ai:asr:${sttModel}`, TURNS_PER_MINUTE);
    if (!isFlux(sttModel)) add(demand, `workers-ai:turn:${defaults.turn}`, TURNS_PER_MINUTE);
  } else if (stt.provider !== "scripted") add(demand, `${stt.provider}:asr:${sttModel}`, 1, 1);
  if (tts.provider !== "scripted") {
    const model = tts.model ?? (tts.provider === "workers-ai" ? defaults.tts : "default");
    add(demand, `${tts.provider}:tts:${model}`, TURNS_PER_MINUTE * SENTENCES_PER_TURN);
  }
  return demand;
}

/** The engine a post-call analysis asks (the agent's model), one request per call. */
export function analysisEngine(configurations: unknown, defaults: DefaultModels): EngineKey | null {
  const voice = isObject(configurations) && isObject(configurations.voice_agent) ? configurations.voice_agent : null;
  const llm = part(voice, "llm", "llm_model");
  if (llm.provider === "scripted") return null;
  return `${llm.provider}:text-generation:${llm.model ?? (llm.provider === "workers-ai" ? defaults.llm : "default")}`;
}

/**
 * How many calls of this demand fit in the budgets, given what is held already (`used`, per engine): the scarcest
 * engine decides. Infinity when no engine the call needs is limited.
 */
export function callsThatFit(demand: CallDemand, budget: (key: EngineKey) => EngineBudget, used: CallDemand = {}): number {
  let fit = Number.POSITIVE_INFINITY;
  for (const [key, d] of Object.entries(demand)) {
    const b = budget(key);
    const held = used[key] ?? { rpm: 0, streams: 0 };
    // A little slack for floating point: 20 calls of 12 rpm fit exactly in 240.
    if (b.rpm != null && d.rpm > 0) fit = Math.min(fit, Math.floor((b.rpm - held.rpm) / d.rpm + 1e-9));
    if (b.streams != null && d.streams > 0) fit = Math.min(fit, Math.floor((b.streams - held.streams) / d.streams + 1e-9));
  }
  return Math.max(0, fit);
}

/** The demands added together (what a set of leases holds). */
export function sumDemand(demands: Iterable<CallDemand>): CallDemand {
  const total: CallDemand = {};
  for (const d of demands) for (const [k, v] of Object.entries(d)) add(total, k, v.rpm, v.streams);
  return total;
}
