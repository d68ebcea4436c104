// The deployment's engine budgets: how many requests per minute (and, where a provider limits them, concurrent
// streams) each engine allows the whole deployment. Pure. Defaults are Workers AI's documented per-account limits
// (developers.cloudflare.com/workers-ai/platform/limits); the deployment overrides them, and shares them out per
// organization, with the ENGINE_LIMITS var (JSON, below) or the capacity object's stored operator settings.
import { z } from "@hono/zod-openapi";

/** An engine as the budget sees it: `workers-ai:<task>:<model>`, or `<provider>:<task>:<model>` for another one. */
export type EngineKey = string;
export type EngineTask = "text-generation" | "asr" | "tts" | "turn";

/** What an engine allows: requests per minute and concurrent streams, each null when unlimited. */
export type EngineBudget = { rpm: number | null; streams: number | null };

/**
 * Workers AI's default per task type. Text-to-Speech and the turn-detection model (Smart Turn) have no line of their
 * own on the limits page; they are taken as the speech tasks' 720 (Automatic Speech Recognition, Translation),
 * overridable like every other figure.
 */
export const WORKERS_AI_TASK_RPM: Record<EngineTask, number> = { "text-generation": 300, asr: 720, tts: 720, turn: 720 };

/** The models the limits page names below or above their task's default (the chat models a voice agent might use). */
export const WORKERS_AI_MODEL_RPM: Record<string, number> = {
  "@hf/thebloke/mistral-7b-instruct-v0.1-awq": 400,
  "@cf/microsoft/phi-2": 720,
  "@cf/qwen/qwen1.5-0.5b-chat": 1500,
  "@cf/qwen/qwen1.5-1.8b-chat": 720,
  "@cf/qwen/qwen1.5-14b-chat-awq": 150,
  "@cf/tinyllama/tinyllama-1.1b-chat-v1.0": 720,
};

/** The share of each budget admission gives to calls; the rest is kept for post-call analysis and bursts. */
export const DEFAULT_CALL_SHARE = 0.9;

const Limit = z.strictObject({
  rpm: z.number().positive().nullable().optional(),
  streams: z.int().positive().nullable().optional(),
});
const OrgLimit = z.strictObject({
  /** The fraction of every budget this organization's calls may hold at once (0-1). */
  share: z.number().min(0).max(1).optional(),
  /** Its own budgets, over the deployment's (never above them: the account's limit is shared). */
  engines: z.record(z.string(), Limit).optional(),
});
/**
 * ENGINE_LIMITS, e.g. `{"engines": {"workers-ai:text-generation": {"rpm": 600},
 * "deepgram:asr:nova-3": {"streams": 50}}, "call_share": 0.9, "organizations": {"7": {"share": 0.5}}}`. An engine
 * key names one model (`workers-ai:text-generation:@cf/meta/llama-3.1-8b-instruct`), a whole task
 * (`workers-ai:text-generation`) or a provider (`deepgram`); the most specific line wins.
 */
export const EngineLimits = z.strictObject({
  engines: z.record(z.string(), Limit).optional(),
  call_share: z.number().gt(0).max(1).optional(),
  organizations: z.record(z.string().regex(/^\d+$/), OrgLimit).optional(),
});
export type EngineLimits = z.infer<typeof EngineLimits>;

/**
 * ENGINE_LIMITS read. Empty is no override; anything unreadable is also none, logged by the caller: a typo in a
 * Worker var must not turn every call start into a 500, and the defaults are the documented limits.
 */
export function parseEngineLimits(text: string | undefined | null): { ok: true; limits: EngineLimits } | { ok: false; error: string } {
  if (!text?.trim()) return { ok: true, limits: {} };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `ENGINE_LIMITS is not JSON: ${(err as Error).message}` };
  }
  const parsed = EngineLimits.safeParse(raw);
  if (!parsed.success) return { ok: false, error: `ENGINE_LIMITS: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}` };
  return { ok: true, limits: parsed.data };
}

/** The deployment's settings over the stored operator's (theirs win field by field: the object is the later word). */
export function mergeLimits(base: EngineLimits, over: EngineLimits | null): EngineLimits {
  if (!over) return base;
  return {
    engines: { ...base.engines, ...over.engines },
    call_share: over.call_share ?? base.call_share,
    organizations: { ...base.organizations, ...over.organizations },
  };
}

/** The key's more general forms, most specific first: `a:b:c` → `a:b:c`, `a:b`, `a`. */
function prefixes(key: EngineKey): string[] {
  const parts = key.split(":");
  // A model name may itself hold colons: the first two parts are provider and task, the rest is the model.
  const [provider, task, ...model] = parts;
  const out = [provider];
  if (task) out.unshift(`${provider}:${task}`);
  if (model.length) out.unshift(`${provider}:${task}:${model.join(":")}`);
  return out;
}

function fromTable(table: Record<string, z.infer<typeof Limit>> | undefined, key: EngineKey): Partial<EngineBudget> {
  const out: Partial<EngineBudget> = {};
  for (const k of prefixes(key).reverse()) {
    const line = table?.[k];
    if (!line) continue;
    if (line.rpm !== undefined) out.rpm = line.rpm;
    if (line.streams !== undefined) out.streams = line.streams;
  }
  return out;
}

/** Workers AI's documented default for an engine key; another provider is unlimited unless configured. */
export function defaultBudget(key: EngineKey): EngineBudget {
  const [provider, task, ...model] = key.split(":");
  if (provider !== "workers-ai") return { rpm: null, streams: null };
  const m = model.join(":");
  const rpm = WORKERS_AI_MODEL_RPM[m] ?? WORKERS_AI_TASK_RPM[task as EngineTask] ?? null;
  return { rpm, streams: null };
}

/** The deployment's budget for one engine: the default, under the configured lines (most specific last). */
export function budgetOf(limits: EngineLimits, key: EngineKey): EngineBudget {
  return { ...defaultBudget(key), ...fromTable(limits.engines, key) };
}

/**
 * What one organization's calls may hold of an engine at once: the deployment's budget times the calls' share
 * and the organization's share, or the organization's own budget where lower.
 */
export function orgBudgetOf(limits: EngineLimits, orgId: number, key: EngineKey): EngineBudget {
  const b = budgetOf(limits, key);
  const org = limits.organizations?.[String(orgId)];
  const share = limits.call_share ?? DEFAULT_CALL_SHARE;
  const orgShare = org?.share ?? 1;
  const own = fromTable(org?.engines, key);
  const scale = (v: number | null, s: number) => (v == null ? null : v * s);
  const lower = (a: number | null, b: number | null | undefined) => (b == null ? a : a == null ? b : Math.min(a, b));
  return {
    rpm: lower(scale(b.rpm, share * orgShare), own.rpm),
    streams: lower(b.streams == null ? null : Math.floor(b.streams * orgShare), own.streams),
  };
}

/** The whole deployment's share for calls (every organization together). */
export function callBudgetOf(limits: EngineLimits, key: EngineKey): EngineBudget {
  const b = budgetOf(limits, key);
  return { rpm: b.rpm == null ? null : b.rpm * (limits.call_share ?? DEFAULT_CALL_SHARE), streams: b.streams };
}
