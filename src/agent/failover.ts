// Failover between an agent's engines (docs/failover.md): which failures move a request to the next engine, the
// cool-down that skips an engine that keeps failing (per isolate, on the clock of src/lib/clock.ts), and the call's
// record of which engine served and every failover, which each agent turn's timing carries to the transcript.
import { clock } from "../lib/clock";
import type { TurnTiming } from "./voice-agent";

export type EngineKind = "llm" | "stt" | "tts";

/** One engine of a failover chain: `id` names it in the record (never a key); `health` keys its cool-down. */
export type Slot<E> = { id: string; health: string; engine: E };

export type FailoverSettings = { firstByteMs: number; coolDownAfter: number; coolDownMs: number };

export const DEFAULT_FAILOVER: FailoverSettings = { firstByteMs: 2500, coolDownAfter: 3, coolDownMs: 30_000 };

/** An engine that answered nothing within the first-byte bound. */
export class FirstByteTimeout extends Error {
  constructor(readonly ms: number) {
    super(`answered nothing within ${ms} ms`);
  }
}

/** Workers AI's internal error codes (its errors page) and their HTTP status: the binding throws them as text. */
const WORKERS_AI_CODES: Record<string, number> = {
  "5007": 400,
  "5004": 400,
  "3039": 400,
  "3003": 400,
  "5018": 403,
  "5016": 403,
  "3023": 403,
  "3041": 403,
  "5019": 405,
  "5005": 405,
  "3042": 404,
  "3006": 413,
  "3007": 408,
  "3008": 408,
  "3036": 429,
  "3040": 429,
  "3043": 500,
};

/** The HTTP status a Workers AI binding error stands for (its code in the message), or null when it names none. */
export function workersAiStatus(err: unknown): number | null {
  const text = String((err as Error)?.message ?? err);
  for (const m of text.matchAll(/\b([35]\d{3})\b/g)) if (WORKERS_AI_CODES[m[1]]) return WORKERS_AI_CODES[m[1]];
  const http = /\b(?:HTTP|status)\s*(\d{3})\b/i.exec(text);
  return http ? Number(http[1]) : null;
}

/**
 * Why a failure moves the request on, or null when it does not. A 408, a 429, a 5xx, an unreachable engine or a
 * first-byte timeout do; so do 401, 403 and 404, which belong to the engine (its key, account or model name), not to
 * the request. Other 4xx (a request the engine could not read: 400, 413, 422) would fail on every engine alike, and the
 * caller's own abort is not a failure.
 */
export function failoverReason(err: unknown, signal?: AbortSignal): string | null {
  if (signal?.aborted) return null;
  if (err instanceof FirstByteTimeout) return "timeout";
  const status = typeof (err as { status?: unknown })?.status === "number" ? (err as { status: number }).status : workersAiStatus(err);
  if (status === null) return /timed out|timeout/i.test(String((err as Error)?.message ?? err)) ? "timeout" : "unreachable";
  if (status >= 500 || status === 408 || status === 429 || status === 401 || status === 403 || status === 404) return String(status);
  return null;
}

/** Consecutive failures per engine, and until when one that failed too often is skipped. */
export class EngineHealth {
  private readonly state = new Map<string, { failures: number; until: number }>();

  failed(key: string, s: FailoverSettings): void {
    const e = this.state.get(key) ?? { failures: 0, until: 0 };
    e.failures++;
    if (e.failures >= s.coolDownAfter) [e.failures, e.until] = [0, clock.now() + s.coolDownMs];
    this.state.set(key, e);
  }

  ok(key: string): void {
    this.state.delete(key);
  }

  cooling(key: string): boolean {
    return (this.state.get(key)?.until ?? 0) > clock.now();
  }

  /** The order to try: engines not cooling down first, as listed; those cooling last (better late than no answer). */
  order<E>(slots: readonly Slot<E>[]): Slot<E>[] {
    const warm = slots.filter((s) => !this.cooling(s.health));
    return [...warm, ...slots.filter((s) => !warm.includes(s))];
  }

  /** Test support: forget everything. */
  clear(): void {
    this.state.clear();
  }
}

/** The isolate's engine health: every call in it shares what it learned about an engine. */
export const engineHealth = new EngineHealth();

/** What a turn's timing gains from failover: the engines that served and the failovers on the way. */
export type FailoverFigures = Pick<TurnTiming, "llm_engine" | "stt_engine" | "tts_engine" | "failovers" | "failover_count">;

/**
 * One call's record: what served and what failed over since the last agent turn closed (the callee's transcription,
 * the model's reply, its voice), taken into that turn's timing. `onFailover` hears each failover as it happens (the
 * agent's filler comes sooner then).
 */
export class FailoverLog {
  private served: Record<EngineKind, string[]> = { llm: [], stt: [], tts: [] };
  private events: string[] = [];
  onFailover: (() => void) | null = null;

  serve(kind: EngineKind, id: string): void {
    if (!this.served[kind].includes(id)) this.served[kind].push(id);
  }

  failedOver(kind: EngineKind, from: string, to: string | null, reason: string): void {
    this.events.push(`${kind} ${from} → ${to ?? "none"} (${reason})`);
    this.onFailover?.();
  }

  /** The record since the last take, or null when nothing was served or failed; cleared. */
  take(): FailoverFigures | null {
    const { served, events } = this;
    this.served = { llm: [], stt: [], tts: [] };
    this.events = [];
    const f: FailoverFigures = {};
    if (served.llm.length) f.llm_engine = served.llm.join(", ");
    if (served.stt.length) f.stt_engine = served.stt.join(", ");
    if (served.tts.length) f.tts_engine = served.tts.join(", ");
    if (events.length) [f.failovers, f.failover_count] = [events.join("; "), events.length];
    return Object.keys(f).length ? f : null;
  }
}

/**
 * `first` (the engine's first answer) within `ms`, else a FirstByteTimeout; `onLate` runs when it times out (to abort
 * the request). The engine's promise is left to settle unobserved.
 */
export function withinFirstByte<T>(first: Promise<T>, ms: number, onLate: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onLate();
      reject(new FirstByteTimeout(ms));
    }, ms);
  });
  first.catch(() => {});
  return Promise.race([first, late]).finally(() => clearTimeout(timer));
}

/** The context every failover wrapper shares. */
export type FailoverContext = { settings: FailoverSettings; health: EngineHealth; log: FailoverLog };

/**
 * Tries `attempt` on each engine in turn (cooling ones last) until one gives its first answer; a failure that does not
 * fail over, or the last engine's, is thrown. `attempt` gets a signal that aborts at the first-byte bound; the last
 * engine has none (there is nowhere to go: a slow answer beats none), only its own time limit.
 */
export async function firstAnswer<E, T>(
  kind: EngineKind,
  slots: readonly Slot<E>[],
  ctx: FailoverContext,
  signal: AbortSignal | undefined,
  attempt: (engine: E, signal: AbortSignal) => Promise<T>,
): Promise<{ slot: Slot<E>; value: T }> {
  const order = ctx.health.order(slots);
  for (let i = 0; ; i++) {
    const slot = order[i];
    const stop = new AbortController();
    const combined = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
    try {
      const answer = attempt(slot.engine, combined);
      const { firstByteMs } = ctx.settings;
      const value = i + 1 < order.length ? await withinFirstByte(answer, firstByteMs, () => stop.abort(new FirstByteTimeout(firstByteMs))) : await answer;
      ctx.health.ok(slot.health);
      return { slot, value };
    } catch (err) {
      const reason = failoverReason(err, signal);
      if (reason === null) throw err;
      ctx.health.failed(slot.health, ctx.settings);
      const next = order[i + 1] ?? null;
      ctx.log.failedOver(kind, slot.id, next?.id ?? null, reason);
      if (!next) throw err;
    }
  }
}
