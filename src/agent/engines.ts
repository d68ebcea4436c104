// The engines a call's agent talks with, as its `voice_agent` settings choose them: Workers AI through the AI binding
// by default, an OpenAI-compatible endpoint for the model, Deepgram or ElevenLabs for speech. Keys are opened only
// here, for the call; endpoints are checked against the organization's network policy before they are used.
import { getDb } from "../lib/db";
import { SecretBox } from "../lib/secret-box";
import { checkOutboundUrl } from "../lib/url-guard";
import { openVoiceSettings, type VoiceAgentSettings } from "../workflows/voice-settings";
import { getGreeting, listGreetings, loadGreeting } from "../uploads/greetings";
import type { ChatModel } from "./chat";
import { ClipSpeechToText, ClipTextToSpeech, type KnownClip } from "./clip-speech";
import { DEFAULT_TURN_SETTINGS, type Engines, type TurnSettings } from "./conversation-agent";
import { DeepgramSpeechToText, DeepgramTextToSpeech, isDeepgramFlux } from "./deepgram-speech";
import { ElevenLabsSpeechToText, ElevenLabsTextToSpeech } from "./elevenlabs-speech";
import { LocalModel } from "./local-model";
import { LocalSpeechTextToSpeech } from "./local-speech";
import { OpenAiModel } from "./openai-model";
import { RESERVED_TOOL_NAMES } from "./actions";
import { ScriptedModel } from "./scripted-model";
import type { SpeechToText, TextToSpeech } from "./speech";
import { WORKERS_AI_CHAT_MODEL, WorkersAiModel, type AiRunner } from "./workers-ai-model";
import { DEFAULT_FAILOVER, engineHealth, type FailoverContext, FailoverLog, type Slot } from "./failover";
import { FailoverModel } from "./failover-model";
import { FailoverSpeechToText, FailoverTextToSpeech } from "./failover-speech";
import { smartTurn } from "./smart-turn";
import { isFlux, WORKERS_AI_STT_MODEL, WORKERS_AI_TTS_MODEL, WorkersAiSpeechToText, WorkersAiTextToSpeech } from "./workers-ai-speech";

/**
 * Local development without a cloud account (no AI binding, or `npm run dev` without --workers-ai, whose binding
 * reaches nothing): an agent that names no speech engines speaks and hears on the offline ones, which know only their
 * clips and understand no speech (a web call's caller then types: docs/web-calls.md).
 */
export function usesLocalSpeech(env: Env, v: { stt?: unknown; tts?: unknown } | null | undefined): boolean {
  const offline = !(env as { AI?: unknown }).AI || (env as { OFFLINE_ENGINES?: string }).OFFLINE_ENGINES === "true";
  return offline && env.LOCAL_DEV === "true" && !v?.stt && !v?.tts;
}

/** The turn settings apply to any engines (the deterministic ones of tests and the demo too). */
export type EngineChoice = ({ ok: true; engines: Engines } | { ok: false; reason: string }) & { turn: TurnSettings };

class Unavailable extends Error {}

/**
 * The agent's engines and turn settings, or why it has none (the call then gets the greeting agent). Whether the
 * organization lets its endpoints be private addresses is asked of the caller (the calls module knows the policy).
 */
export async function enginesFor(env: Env, orgId: number, configurations: unknown, allowsPrivate: () => Promise<boolean>): Promise<EngineChoice> {
  let v: VoiceAgentSettings | null;
  try {
    v = await openVoiceSettings(env.ENCRYPTION_KEYS ? SecretBox.fromEnv(env) : null, orgId, configurations);
  } catch (err) {
    return { ok: false, reason: String((err as Error)?.message ?? err), turn: DEFAULT_TURN_SETTINGS };
  }
  const ai = (env as { AI?: AiRunner }).AI;
  const localSpeech = usesLocalSpeech(env, v);
  if (localSpeech && !v?.llm) return { ok: true, engines: await localEngines(env, orgId), turn: turnSettings(v) };
  const needAi = (what: string) => {
    if (!ai) throw new Unavailable(`${what} is Workers AI, and this deployment has no AI binding`);
    return ai;
  };
  let privateOk: boolean | null = null;
  const endpoint = async (url: string | undefined, what: string) => {
    if (!url) return undefined;
    privateOk ??= await allowsPrivate();
    const verdict = checkOutboundUrl(url, { allowPrivate: privateOk });
    if (!verdict.ok) throw new Unavailable(`${what} endpoint refused: ${verdict.message}`);
    return url;
  };
  const localOnly = (what: string) => {
    if (env.LOCAL_DEV !== "true") throw new Unavailable(`${what} is scripted, which only local development (LOCAL_DEV) runs`);
  };
  try {
    const build = {
      needAi,
      endpoint,
      localOnly,
      ai,
      clips: (c: { text: string; recording_id: string }[]) => storedClips(env, orgId, c),
      voice: () => offlineVoice(env),
    };
    const llm = await chain(orgId, v?.llm ?? { provider: "workers-ai" as const, model: v?.llm_model }, v?.llm_fallbacks, (c) => chatModel(c, build), llmId);
    if (localSpeech) {
      // Offline, an agent that names only its model (a starter template's scripted one) speaks and hears on the
      // offline engines: its unnamed speech engines would be Workers AI, which reaches nothing here.
      const local = await localEngines(env, orgId);
      return { ok: true, engines: { ...local, model: llm.length > 1 ? new FailoverModel(llm, failoverContext(v)) : llm[0].engine }, turn: turnSettings(v) };
    }
    const stt = await chain(
      orgId,
      v?.stt ?? { provider: "workers-ai" as const, model: v?.stt_model },
      v?.stt_fallbacks,
      (c) => sttEngine(c, build),
      speechId(WORKERS_AI_STT_MODEL),
    );
    const tts = await chain(
      orgId,
      v?.tts ?? { provider: "workers-ai" as const, model: v?.tts_model, voice: v?.tts_voice },
      v?.tts_fallbacks,
      (c) => ttsEngine(c, build),
      speechId(WORKERS_AI_TTS_MODEL),
    );
    if (llm.length + stt.length + tts.length === 3)
      return { ok: true, engines: { model: llm[0].engine, stt: stt[0].engine, tts: tts[0].engine }, turn: turnSettings(v) };
    // Fallbacks: each part with more than one engine fails over along its chain, recorded in the call's log.
    const ctx = failoverContext(v);
    const engines: Engines = {
      model: llm.length > 1 ? new FailoverModel(llm, ctx) : llm[0].engine,
      stt: stt.length > 1 ? new FailoverSpeechToText(stt, ctx) : stt[0].engine,
      tts: tts.length > 1 ? new FailoverTextToSpeech(tts, ctx) : tts[0].engine,
      failovers: ctx.log,
    };
    return { ok: true, engines, turn: turnSettings(v) };
  } catch (err) {
    if (err instanceof Unavailable) return { ok: false, reason: err.message, turn: turnSettings(v) };
    throw err;
  }
}

type Builders = {
  needAi: (what: string) => AiRunner;
  endpoint: (url: string | undefined, what: string) => Promise<string | undefined>;
  localOnly: (what: string) => void;
  clips?: (clips: { text: string; recording_id: string }[]) => Promise<KnownClip[]>;
  /** The scripted text-to-speech: the offline voice (see `offlineVoice`). */
  voice?: () => TextToSpeech;
  /** The deployment's AI binding, where it has one: smart-turn judges the turns of engines without turn events. */
  ai?: AiRunner;
};

type Choice = { provider: string; model?: string; base_url?: string; voice?: string; api_key?: string };

/** The primary and its fallbacks, each built and named; keyed engines' health is the organization's own. */
async function chain<C extends Choice, E>(orgId: number, primary: C, fallbacks: C[] | undefined, make: (c: C) => Promise<E>, name: (c: C) => string) {
  const slots: Slot<E>[] = [];
  for (const c of [primary, ...(fallbacks ?? [])]) {
    const id = name(c);
    const shared = c.provider === "workers-ai"; // one account's binding: its limits are every organization's
    slots.push({ id, health: shared ? id : `${orgId}/${id}@${c.base_url ?? ""}`, engine: await make(c) });
  }
  return slots;
}

/** How an engine is named in the run's record (never its key). */
const llmId = (c: Choice) =>
  c.provider === "workers-ai"
    ? `workers-ai:${c.model ?? WORKERS_AI_CHAT_MODEL}`
    : c.provider === "openai"
      ? `openai:${c.model}@${hostOf(c.base_url)}`
      : c.provider;
const speechId = (workersAiDefault: string) => (c: Choice) =>
  [c.provider, c.model ?? (c.provider === "workers-ai" ? workersAiDefault : undefined), c.voice].filter(Boolean).join(":");
const hostOf = (url: string | undefined) => {
  try {
    return new URL(url ?? "").host;
  } catch {
    return "?";
  }
};

function failoverContext(v: VoiceAgentSettings | null): FailoverContext {
  const f = v?.failover ?? {};
  const d = DEFAULT_FAILOVER;
  return {
    settings: {
      firstByteMs: f.first_byte_timeout_ms ?? d.firstByteMs,
      coolDownAfter: f.cool_down_after ?? d.coolDownAfter,
      coolDownMs: f.cool_down_seconds !== undefined ? f.cool_down_seconds * 1000 : d.coolDownMs,
    },
    health: engineHealth,
    log: new FailoverLog(),
  };
}

type SttChoice = NonNullable<VoiceAgentSettings["stt"]>;
type TtsChoice = NonNullable<VoiceAgentSettings["tts"]>;

/** Flux's end-of-turn settings as the agent set them (Workers AI's Flux and Deepgram's own take the same). */
const fluxOf = (c: { eot_threshold?: number; eager_eot_threshold?: number | null; eot_timeout_ms?: number }) => ({
  eotThreshold: c.eot_threshold,
  eagerEotThreshold: "eager_eot_threshold" in c ? c.eager_eot_threshold : undefined,
  eotTimeoutMs: c.eot_timeout_ms,
});

async function sttEngine(c: SttChoice, b: Builders): Promise<SpeechToText> {
  if (c.provider === "workers-ai") return new WorkersAiSpeechToText(b.needAi("Speech-to-text"), c.model, fluxOf(c));
  if (c.provider === "scripted") {
    b.localOnly("Speech-to-text");
    return new ClipSpeechToText(await b.clips!(c.clips));
  }
  // Engines without turn events of their own have the turn's end judged by smart-turn on the deployment's binding
  // (none: the silence bound alone).
  const turnModel = b.ai ? smartTurn(b.ai) : undefined;
  const s = { apiKey: c.api_key ?? "", model: c.model, baseUrl: await b.endpoint(c.base_url, "Speech-to-text"), turnModel };
  return c.provider === "deepgram" ? new DeepgramSpeechToText({ ...s, flux: fluxOf(c) }) : new ElevenLabsSpeechToText(s);
}

/** How the end of an agent's callee turns is decided: see `turnDetection`. */
export type TurnDetection = "flux" | "smart-turn" | "silence";

/**
 * How the end of the caller's turn is decided for an agent's primary speech engine, read from its stored settings
 * (no key opened): `flux` (Deepgram Flux's end-of-turn events, on Workers AI or Deepgram's own API), `smart-turn`
 * (the turn-detection model at a pause) or `silence` (the energy gate's `end_of_turn_ms` alone: the scripted and
 * offline engines, or no AI binding). The silence bound stays the fallback of the first two.
 */
export function turnDetection(configurations: unknown, hasAi: boolean): TurnDetection {
  const v = (configurations as { voice_agent?: { stt?: { provider?: unknown; model?: unknown }; stt_model?: unknown } } | null)?.voice_agent;
  const stt = v?.stt ?? { provider: "workers-ai", model: v?.stt_model };
  const model = typeof stt.model === "string" ? stt.model : undefined;
  if (stt.provider === "workers-ai") return !hasAi ? "silence" : isFlux(model ?? WORKERS_AI_STT_MODEL) ? "flux" : "smart-turn";
  if (stt.provider === "deepgram" && isDeepgramFlux(model)) return "flux";
  return (stt.provider === "deepgram" || stt.provider === "elevenlabs") && hasAi ? "smart-turn" : "silence";
}

async function ttsEngine(c: TtsChoice, b: Builders): Promise<TextToSpeech> {
  if (c.provider === "workers-ai") return new WorkersAiTextToSpeech(b.needAi("Text-to-speech"), c.model, c.voice);
  if (c.provider === "scripted") {
    b.localOnly("Text-to-speech");
    return b.voice ? b.voice() : new ClipTextToSpeech([]);
  }
  const s = { apiKey: c.api_key ?? "", model: c.model, baseUrl: await b.endpoint(c.base_url, "Text-to-speech") };
  return c.provider === "deepgram" ? new DeepgramTextToSpeech(s) : new ElevenLabsTextToSpeech({ ...s, voice: c.voice });
}

/** The agent's language model alone (post-call analysis needs no speech), or why it has none. */
export async function modelFor(
  env: Env,
  orgId: number,
  configurations: unknown,
  allowsPrivate: () => Promise<boolean>,
): Promise<{ ok: true; model: ChatModel } | { ok: false; reason: string }> {
  try {
    const v = await openVoiceSettings(env.ENCRYPTION_KEYS ? SecretBox.fromEnv(env) : null, orgId, configurations);
    const ai = (env as { AI?: AiRunner }).AI;
    const needAi = (what: string) => {
      if (!ai) throw new Unavailable(`${what} is Workers AI, and this deployment has no AI binding`);
      return ai;
    };
    const endpoint = async (url: string | undefined, what: string) => {
      const verdict = url ? checkOutboundUrl(url, { allowPrivate: await allowsPrivate() }) : null;
      if (verdict && !verdict.ok) throw new Unavailable(`${what} endpoint refused: ${verdict.message}`);
      return url;
    };
    const localOnly = (what: string) => {
      if (env.LOCAL_DEV !== "true") throw new Unavailable(`${what} is scripted, which only local development (LOCAL_DEV) runs`);
    };
    const b = { needAi, endpoint, localOnly };
    const llm = await chain(orgId, v?.llm ?? { provider: "workers-ai" as const, model: v?.llm_model }, v?.llm_fallbacks, (c) => chatModel(c, b), llmId);
    return { ok: true, model: llm.length > 1 ? new FailoverModel(llm, failoverContext(v)) : llm[0].engine };
  } catch (err) {
    return { ok: false, reason: String((err as Error)?.message ?? err) };
  }
}

async function chatModel(llm: NonNullable<VoiceAgentSettings["llm"]>, b: Builders): Promise<ChatModel> {
  if (llm.provider === "openai")
    return new OpenAiModel({ baseUrl: (await b.endpoint(llm.base_url, "The model"))!, apiKey: llm.api_key ?? "", model: llm.model });
  if (llm.provider === "scripted") {
    b.localOnly("The model");
    return new ScriptedModel(llm.script);
  }
  return new WorkersAiModel(b.needAi("The model"), llm.model);
}

/** How many of the organization's recordings the offline speech-to-text compares a turn with. */
const LOCAL_CLIPS = 20;

/**
 * The offline engines: the local model walks the graph, the speech-to-text recognizes the organization's stored
 * recordings by their sound (each heard as its name, e.g. the sandbox callee's lines, which `npm run dev` stores),
 * and the agent speaks through the local speech server where `npm run dev` or the demo runs one (LOCAL_SPEECH_URL),
 * else in tones.
 */
async function localEngines(env: Env, orgId: number): Promise<Engines> {
  const rows = await listGreetings(getDb(env), orgId, null, LOCAL_CLIPS);
  const clips: KnownClip[] = [];
  for (const row of rows) {
    const audio = await loadGreeting(env.UPLOADS, row.key);
    if (audio) clips.push({ text: row.name, ...audio });
  }
  return { model: new LocalModel(RESERVED_TOOL_NAMES), stt: new ClipSpeechToText(clips), tts: offlineVoice(env) };
}

/**
 * The offline engines' voice (and the scripted text-to-speech's): the local speech server `npm run dev` and the demo
 * run (LOCAL_SPEECH_URL, local development only), in tones where it is not set or does not answer.
 */
function offlineVoice(env: Env): TextToSpeech {
  const speechUrl = (env as { LOCAL_SPEECH_URL?: string }).LOCAL_SPEECH_URL;
  const tone = new ClipTextToSpeech([]);
  return speechUrl && env.LOCAL_DEV === "true" ? new LocalSpeechTextToSpeech(speechUrl, tone) : tone;
}

/** The scripted engine's clips: the organization's stored recordings, each with the words it says. */
async function storedClips(env: Env, orgId: number, clips: { text: string; recording_id: string }[]): Promise<KnownClip[]> {
  const out: KnownClip[] = [];
  for (const c of clips) {
    const row = await getGreeting(getDb(env), orgId, c.recording_id);
    const audio = row ? await loadGreeting(env.UPLOADS, row.key) : null;
    if (!audio) throw new Unavailable(`Speech-to-text's clip ${c.recording_id} is not a stored recording`);
    out.push({ text: c.text, ...audio });
  }
  return out;
}

/** The agent's turn-taking over the defaults. */
export function turnSettings(v: VoiceAgentSettings | null): TurnSettings {
  const t = v?.turn ?? {};
  const d = DEFAULT_TURN_SETTINGS;
  return {
    ...d,
    endOfTurnMs: t.end_of_turn_ms ?? d.endOfTurnMs,
    interruptMinMs: t.interrupt_min_ms ?? d.interruptMinMs,
    repromptAfterMs: t.reprompt_after_ms ?? d.repromptAfterMs,
    maxReprompts: t.max_reprompts ?? d.maxReprompts,
    maxWaitMs: t.max_wait_ms ?? d.maxWaitMs,
    fillerAfterMs: t.filler_after_ms ?? d.fillerAfterMs,
    fillerText: t.filler_text ?? d.fillerText,
    repromptText: t.reprompt_text ?? d.repromptText,
    goodbyeText: t.goodbye_text ?? d.goodbyeText,
    errorText: t.error_text ?? d.errorText,
    voicemailText: t.voicemail_text ?? d.voicemailText,
  };
}
