// An agent's voice providers, in `workflow_configurations.voice_agent`: the language model (Workers AI, or any
// OpenAI-compatible endpoint), speech-to-text and text-to-speech (Workers AI, Deepgram, ElevenLabs). API keys are
// sealed like telephony secrets: stored as envelopes with their mask, shown only as the mask, opened only for a call.
import { z } from "@hono/zod-openapi";
import { ApiError, type ValidationItem } from "../lib/errors";
import { isObject, type Obj } from "../lib/helpers";
import { classifySecretInput, maskSecret } from "../lib/mask";
import { isEnvelope, type Envelope, type SecretBox } from "../lib/secret-box";
import { checkOutboundUrl } from "../lib/url-guard";

const ModelName = z.string().regex(/^[@\w./:-]{1,128}$/, "Must be a model or voice name (letters, digits and @ . / : _ -)");
const ApiKey = z.string().min(1).max(1024);
const BaseUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .refine((u) => checkOutboundUrl(u, { allowPrivate: true }).ok, { message: "Must not point at metadata, link-local or reserved addresses" });

const workersAi = z.strictObject({ provider: z.literal("workers-ai"), model: ModelName.optional() });

// Local development without a cloud account: a scripted model (replies keyed by the callee's words and the node's
// prompt) and speech engines that recognize stored clips (greeting recordings) by their sound and speak tones. A call
// uses them only where LOCAL_DEV is set.
const Text = z.string().max(2000);
const ScriptStep = z.strictObject({
  user: Text.optional().openapi({ description: "Matches when the callee's last words contain this (any case)" }),
  prompt: Text.optional().openapi({ description: "Matches when the node's prompt contains this" }),
  after: z.enum(["caller", "agent"]).optional().openapi({
    description:
      "Matches only right after the caller spoke (caller), or when the agent acted last (agent: a move to this node, a tool's answer, a transfer that did not connect); absent: either",
  }),
  say: Text.optional(),
  call: z.strictObject({ name: z.string().max(64), arguments: z.record(z.string(), z.unknown()).optional() }).optional(),
});
const scriptedLlm = z.strictObject({ provider: z.literal("scripted"), script: z.array(ScriptStep).min(1).max(100) });
const scriptedStt = z.strictObject({
  provider: z.literal("scripted"),
  clips: z
    .array(z.strictObject({ text: Text.min(1), recording_id: z.string().min(1).max(64) }))
    .min(1)
    .max(50)
    .openapi({ description: "Greeting recordings (POST /greeting-recordings) and the words each says" }),
});
const scriptedTts = z.strictObject({ provider: z.literal("scripted") });

const Llm = z.discriminatedUnion("provider", [
  workersAi,
  scriptedLlm,
  z.strictObject({
    provider: z.literal("openai"),
    base_url: BaseUrl.openapi({ description: "The chat-completions API's base, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1" }),
    model: ModelName,
    api_key: ApiKey.optional().openapi({ description: "Sent as a Bearer token; stored encrypted, shown masked" }),
  }),
]);

/**
 * Deepgram and ElevenLabs need a key. On create nothing is stored, so the schema requires it; on update it may be
 * omitted (or sent back as its mask) to keep the stored one, which sealVoiceSecrets allows only for the same provider
 * and base_url: a condition on stored state that JSON Schema cannot state, hence the description.
 */
const KEPT_KEY =
  "Required unless this agent already has a key stored for the same provider and base_url: then omit it (or send its mask) to keep that key; otherwise a 422 `missing` here. Stored encrypted, shown masked";
const keyed = <P extends string>(provider: P, onCreate: boolean) =>
  z.strictObject({
    provider: z.literal(provider),
    api_key: onCreate ? ApiKey.openapi({ description: "Stored encrypted, shown masked" }) : ApiKey.optional().openapi({ description: KEPT_KEY }),
    model: ModelName.optional(),
    base_url: BaseUrl.optional(),
  });

/**
 * Deepgram Flux's end-of-turn settings, as Deepgram documents them (sent as strings in its query): the same fields on
 * Workers AI's Flux and on Deepgram's own API with the agent's key.
 */
const fluxTurn = {
  eot_threshold: z
    .number()
    .min(0.5)
    .max(0.9)
    .optional()
    .openapi({ description: "Flux only: the confidence at which it ends the caller's turn (Deepgram's default 0.7; higher waits longer)" }),
  eager_eot_threshold: z.number().min(0.3).max(0.9).nullable().optional().openapi({
    description:
      "Flux only: the confidence at which it says the turn is probably over and the agent starts its reply ahead, unheard until the turn ends (default 0.4; null: no reply ahead). At most eot_threshold",
  }),
  eot_timeout_ms: z.int().min(500).max(10_000).optional().openapi({
    description:
      "Flux only: the silence after which Flux ends the turn whatever its confidence (Deepgram's default 5000; the agent's end_of_turn_ms bound still applies)",
  }),
};
const eagerAtMostEot = {
  check: (s: { eot_threshold?: number; eager_eot_threshold?: number | null }) =>
    s.eager_eot_threshold == null || s.eager_eot_threshold <= (s.eot_threshold ?? 0.7),
  params: { message: "Must not exceed eot_threshold (0.7 when not set)", path: ["eager_eot_threshold"] },
};

/** Workers AI's speech-to-text, with Deepgram Flux's end-of-turn confidences (other models have none to set). */
const workersAiStt = workersAi.extend(fluxTurn).refine(eagerAtMostEot.check, eagerAtMostEot.params);

/** Deepgram's own API with the agent's key: live turns on Flux (flux-general-en) unless a Nova model is named. */
const deepgramStt = (onCreate: boolean) =>
  keyed("deepgram", onCreate)
    .extend({
      model: ModelName.optional().openapi({
        description: "Live turns: flux-general-en (default: Deepgram's end-of-turn events) or a Nova model (nova-3: smart-turn judges the turn's end)",
      }),
      ...fluxTurn,
    })
    .refine(eagerAtMostEot.check, eagerAtMostEot.params);

const stt = (onCreate: boolean) => z.discriminatedUnion("provider", [workersAiStt, deepgramStt(onCreate), keyed("elevenlabs", onCreate), scriptedStt]);
const tts = (onCreate: boolean) =>
  z.discriminatedUnion("provider", [
    scriptedTts,
    workersAi.extend({ voice: ModelName.optional() }),
    keyed("deepgram", onCreate),
    keyed("elevenlabs", onCreate).extend({ voice: ModelName.openapi({ description: "The ElevenLabs voice_id" }) }),
  ]);

const ms = (min: number, max: number, what: string) => z.int().min(min).max(max).openapi({ description: what });
const Line = z.string().trim().min(1).max(500);

/** Turn-taking: every field optional (the defaults suit most calls). */
const Turn = z
  .strictObject({
    end_of_turn_ms: ms(200, 3000, "The callee's silence that ends their turn (default 700)"),
    interrupt_min_ms: ms(
      100,
      2000,
      "The callee's voice over the agent this long pauses it, and a backchannel then lets it go on; where the speech engine gives words as they are spoken (Flux), a backchannel never pauses it (default 300)",
    ),
    reprompt_after_ms: ms(2000, 60_000, "The callee's silence before they are asked whether they are still there (default 8000)"),
    max_reprompts: z.int().min(0).max(3).openapi({ description: "How often they are asked before the call ends (default 1)" }),
    max_wait_ms: ms(1000, 30_000, "The longest dead air after the callee's turn before the agent apologises and ends the call (default 6000)"),
    filler_after_ms: ms(0, 10_000, "A slow reply gets a short filler after this long; 0: never (default 1500)"),
    filler_text: Line.optional(),
    reprompt_text: Line.optional(),
    goodbye_text: Line.optional(),
    error_text: Line.optional(),
    voicemail_text: z.string().trim().min(1).max(1000).optional().openapi({
      description:
        "The message left on an answering machine at its beep (where the campaign's voicemail_action is leave_message); template variables like {{ first_name }} are filled from the run's. Default: the call's opening greeting",
    }),
  })
  .partial();

/** Fallback engines, tried in order when the one before fails (docs/failover.md); at most MAX_FALLBACKS each. */
export const MAX_FALLBACKS = 3;
const fallbacks = <T extends z.ZodType>(engine: T, what: string) =>
  z
    .array(engine)
    .max(MAX_FALLBACKS)
    .openapi({ description: `${what} tried in order when the one before fails (a 429, a 5xx, a timeout); keys as the primary's` });

/** How failover decides: the first-byte bound, and the cool-down of an engine that keeps failing. */
const Failover = z
  .strictObject({
    first_byte_timeout_ms: ms(500, 10_000, "An engine that has answered nothing this long moves the request to the next engine (default 2500)"),
    cool_down_after: z.int().min(1).max(20).openapi({ description: "Consecutive failures after which an engine is skipped for the cool-down (default 3)" }),
    cool_down_seconds: z.int().min(1).max(3600).openapi({ description: "How long an engine that kept failing is skipped (default 30)" }),
  })
  .partial();

const voiceAgent = (onCreate: boolean) =>
  z.strictObject({
    llm: Llm.optional(),
    stt: stt(onCreate).optional(),
    tts: tts(onCreate).optional(),
    llm_fallbacks: fallbacks(Llm, "Models").optional(),
    stt_fallbacks: fallbacks(stt(onCreate), "Speech-to-text engines").optional(),
    tts_fallbacks: fallbacks(tts(onCreate), "Text-to-speech engines").optional(),
    failover: Failover.optional(),
    turn: Turn.optional(),
    // The first form of these settings (Workers AI only), still read.
    llm_model: ModelName.optional(),
    stt_model: ModelName.optional(),
    tts_model: ModelName.optional(),
    tts_voice: ModelName.optional(),
  });

const ABOUT = "The agent's model and speech providers (default: Workers AI for all three)";
/** As an update takes it: a stored key may be kept by omitting it. */
export const VoiceAgentSettings = voiceAgent(false).openapi("VoiceAgentSettings", { description: ABOUT });
/** As a create takes it: nothing is stored yet, so every key a provider needs is in the body. */
export const NewVoiceAgentSettings = voiceAgent(true).openapi("NewVoiceAgentSettings", { description: ABOUT });

export type VoiceAgentSettings = z.infer<typeof VoiceAgentSettings>;
type Part = "llm" | "stt" | "tts";
const PARTS: readonly Part[] = ["llm", "stt", "tts"];
type List = `${Part}_fallbacks`;
const LISTS: readonly List[] = ["llm_fallbacks", "stt_fallbacks", "tts_fallbacks"];

// A fallback's key is bound to its list, not its place in it, so reordering the list keeps every key.
const aad = (orgId: number, part: Part | List) => `edgedial/agent/${orgId}/voice_agent.${part}.api_key`;
const loc = (...at: (string | number)[]) => ["body", "workflow_configurations", "voice_agent", ...at, "api_key"];

/** The stored voice_agent, or null. */
const storedVoice = (configurations: unknown): Obj | null =>
  isObject(configurations) && isObject(configurations.voice_agent) ? configurations.voice_agent : null;

type SealedKey = Envelope & { mask: string };

/** A stored engine's sealed key, when it may serve `p`: the same provider and endpoint (a key never goes elsewhere). */
const keyFor = (old: unknown, p: Obj): SealedKey | null =>
  isObject(old) && isEnvelope(old.api_key) && old.provider === p.provider && old.base_url === p.base_url ? (old.api_key as SealedKey) : null;

/**
 * One engine's key sealed. `same`: the stored key at the same place; `others`: other stored keys it may keep by their
 * mask (a reordered fallback list). Omitted, the key at the same place is kept, else the only one that qualifies.
 */
async function sealOne(
  box: () => SecretBox,
  p: Obj,
  same: SealedKey | null,
  others: SealedKey[],
  aadText: string,
  at: ValidationItem["loc"],
  bad: ValidationItem[],
): Promise<Obj> {
  const next: Obj = { ...p };
  const sent = p.api_key;
  if (typeof sent !== "string") {
    const kept = same ?? (others.length === 1 ? others[0] : null);
    if (kept) next.api_key = kept;
    else if (p.provider === "deepgram" || p.provider === "elevenlabs") bad.push({ loc: at, msg: "Field required", type: "missing" });
    return next;
  }
  const byMask = [same, ...others].find((k) => k && k.mask === sent) ?? null;
  const verdict = classifySecretInput(sent, byMask?.mask ?? same?.mask ?? null);
  if (verdict.kind === "keep") next.api_key = byMask ?? same;
  else if (verdict.kind === "invalid")
    bad.push({
      loc: at,
      msg:
        same || others.length
          ? "Looks like a masked value that does not match the stored key; send the key itself"
          : "Send the key itself (a masked key is kept only for the same provider and endpoint)",
      type: "value_error",
    });
  else next.api_key = { ...(await box().encrypt(verdict.value, aadText)), mask: maskSecret(verdict.value) };
  return next;
}

/**
 * The configurations to store: every api_key sealed. A key sent back as its current mask keeps the stored key, but
 * only while the provider and endpoint stay the same (a key is never sent to an endpoint it was not given for); a key
 * omitted for a provider that needs one also keeps it under the same condition.
 */
export async function sealVoiceSecrets(box: () => SecretBox, orgId: number, input: Obj, stored: unknown): Promise<Obj> {
  if (!isObject(input.voice_agent)) return input;
  const voice: Obj = { ...input.voice_agent };
  const before = storedVoice(stored);
  const bad: ValidationItem[] = [];
  for (const part of PARTS) {
    const p = voice[part];
    if (isObject(p)) voice[part] = await sealOne(box, p, keyFor(before?.[part], p), [], aad(orgId, part), loc(part), bad);
  }
  for (const list of LISTS) {
    const items = voice[list];
    if (!Array.isArray(items)) continue;
    const old: unknown[] = Array.isArray(before?.[list]) ? (before[list] as unknown[]) : [];
    voice[list] = await Promise.all(
      items.map((p, i) => {
        if (!isObject(p)) return p;
        const others = old.filter((_, j) => j !== i).flatMap((o) => keyFor(o, p) ?? []);
        return sealOne(box, p, keyFor(old[i], p), others, aad(orgId, list), loc(list, i), bad);
      }),
    );
  }
  if (bad.length) throw new ApiError(422, bad);
  return { ...input, voice_agent: voice };
}

/** An engine with its sealed key replaced by `to(key)`. */
const withKey = async (p: unknown, to: (key: Envelope & { mask?: string }) => Promise<unknown> | unknown): Promise<unknown> =>
  isObject(p) && isEnvelope(p.api_key) ? { ...p, api_key: await to(p.api_key as Envelope & { mask?: string }) } : p;

/** Every engine of a voice_agent (primaries and fallbacks) with its key replaced by `to(key, part)`. */
async function mapKeys(voice: Obj, to: (key: Envelope & { mask?: string }, part: Part | List) => Promise<unknown> | unknown): Promise<Obj> {
  const out: Obj = { ...voice };
  for (const part of PARTS) out[part] = await withKey(voice[part], (k) => to(k, part));
  for (const list of LISTS)
    if (Array.isArray(voice[list])) out[list] = await Promise.all((voice[list] as unknown[]).map((p) => withKey(p, (k) => to(k, list))));
  for (const k of [...PARTS, ...LISTS]) if (out[k] === undefined) delete out[k];
  return out;
}

/** The configurations as shown: every sealed key replaced by its mask. */
export function maskVoiceSecrets(configurations: Obj): Obj {
  const voice = storedVoice(configurations);
  if (!voice) return configurations;
  const shown: Obj = { ...voice };
  const mask = (p: unknown) => (isObject(p) && isEnvelope(p.api_key) ? { ...p, api_key: String((p.api_key as { mask?: unknown }).mask ?? "") } : p);
  for (const part of PARTS) if (voice[part] !== undefined) shown[part] = mask(voice[part]);
  for (const list of LISTS) if (Array.isArray(voice[list])) shown[list] = (voice[list] as unknown[]).map(mask);
  return { ...configurations, voice_agent: shown };
}

/** The voice settings of a call, keys opened; null when there are none or they no longer read as settings. */
export async function openVoiceSettings(box: SecretBox | null, orgId: number, configurations: unknown): Promise<VoiceAgentSettings | null> {
  const voice = storedVoice(configurations);
  if (!voice) return null;
  const open = await mapKeys(voice, async (key, part) => {
    if (!box) throw new Error("The agent's provider key cannot be opened: ENCRYPTION_KEYS is not set");
    const { mask: _mask, ...envelope } = key;
    return box.decrypt(envelope, aad(orgId, part));
  });
  const parsed = VoiceAgentSettings.safeParse(open);
  return parsed.success ? parsed.data : null;
}
