// Small helpers shared by the provider call modules: carrier HTTP with a timeout, auth headers,
// number formats, XML escaping. Carrier-specific behaviour stays in each provider folder.
import type { CredentialsCheck, OriginateResult, ProviderEnv, ProviderName } from "./types";
import { base64Encode } from "../../lib/crypto";
import { speechChunks } from "../../lib/speech";
import { clock } from "../../lib/clock";

const enc = new TextEncoder();

/** How long we wait for a carrier's REST API before calling the attempt failed (CARRIER_TIMEOUT_MS overrides it). */
export const CARRIER_TIMEOUT_MS = 10_000;

export function basicAuth(user: string, password: string): string {
  return "Basic " + base64Encode(enc.encode(`${user}:${password}`));
}

/** The carrier's base URL: a deployment override (CARRIER_BASE_URLS), else the real host. No trailing slash. */
export function baseUrl(env: ProviderEnv, provider: ProviderName, fallback: string): string {
  return (env.baseUrls[provider] || fallback).replace(/\/+$/, "");
}

/** `+14155550100` -> `14155550100` (carriers that want DIGITS). */
export const digits = (e164: string): string => e164.replace(/^\+/, "");

/** What XML 1.0 forbids: C0 controls other than tab, LF and CR, U+FFFE/U+FFFF, and lone surrogates (`u` flag). */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/**
 * The one sanitizer for text we hand a carrier (XML answer documents and JSON speak payloads alike): each
 * character XML 1.0 does not allow becomes a space, so contact data such as `Ada\u000bBob` can neither make a
 * document malformed nor reach a text-to-speech engine as garbage.
 */
export function speakable(text: string): string {
  return text.replace(NOT_XML_CHAR, " ");
}

/** Text content / attribute value escaping for the XML answer documents (sanitized first). */
export function xmlEscape(text: string): string {
  return speakable(text).replace(/[<>&"']/g, (ch) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[ch]!);
}

/**
 * A TwiML-style answer document (TwiML, CXML, Plivo XML) that speaks `text` with one `verb` per part of at most
 * `maxChars` (src/lib/speech.ts), then hangs up; with nothing to say it just hangs up.
 */
export function speakThenHangupXml(verb: "Say" | "Speak", text: string, maxChars: number): string {
  const speak = speechChunks(speakable(text), maxChars)
    .map((part) => `<${verb}>${xmlEscape(part)}</${verb}>`)
    .join("");
  return `<?xml version="1.0" encoding="UTF-8"?><Response>${speak}<Hangup/></Response>`;
}

/**
 * TwiML's (and CXML's) bidirectional stream: the call's audio on our socket until it closes. Both carriers run the
 * verb after `</Connect>` once the socket closes, so a `<Redirect>` to `resumeUrl` brings a call whose socket dropped
 * (a deploy) back for a new stream; a call we end is hung up through the API first, so it never gets there.
 */
export function connectStreamXml(streamUrl: string, resumeUrl?: string): string {
  const resume = resumeUrl ? `<Redirect method="POST">${xmlEscape(resumeUrl)}</Redirect>` : "";
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${xmlEscape(streamUrl)}"/></Connect>${resume}</Response>`;
}

export type CarrierResponse = {
  status: number;
  text: string;
  json: any;
  /** The carrier's `Retry-After`, in ms (seconds or an HTTP date), when it sent one. */
  retryAfterMs?: number | null;
  /** Status 0 only: the connection failed before the request was sent, so the carrier cannot have acted on it. */
  notSent?: boolean;
  /** How many requests were made (originate retries); 1 when absent. */
  attempts?: number;
};

/**
 * Errors a runtime raises before any byte of the request left (refused connection, unknown host). workerd
 * reports a refused connection as "Network connection lost.", the same words as a connection dropped after
 * the request went out, so that one stays ambiguous: never retried.
 */
export function failedBeforeSending(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } } | null;
  const codes = [e?.code, e?.cause?.code].map((c) => String(c ?? ""));
  if (codes.some((c) => ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"].includes(c))) return true;
  const text = `${String(e?.message ?? "")} ${String(e?.cause?.message ?? "")}`;
  return /ECONNREFUSED|connection refused|ENOTFOUND|getaddrinfo/i.test(text);
}

/** `Retry-After` as ms: delta seconds, or an HTTP date relative to now; null when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, nowMs = clock.now()): number | null {
  const v = value?.trim();
  if (!v) return null;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : null;
}

/**
 * One carrier request with a timeout. Network errors and timeouts come back as status 0 so the
 * caller can report them in the contract's terms (a 502 for single calls, `failed` on the run).
 * Pass the provider env so a deployment (or the test pool) can shorten the wait; the default is 10 s.
 */
export async function carrierFetch(
  url: string,
  init: RequestInit,
  env: Pick<ProviderEnv, "carrierTimeoutMs">,
  fetcher: typeof fetch = fetch,
): Promise<CarrierResponse> {
  let res: Response;
  const timeoutMs = env?.carrierTimeoutMs ?? CARRIER_TIMEOUT_MS;
  try {
    res = await fetcher(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const timedOut = (err as Error)?.name === "TimeoutError" || (err as Error)?.name === "AbortError";
    if (timedOut) return { status: 0, text: `request timed out after ${timeoutMs / 1000} s`, json: null };
    const notSent = failedBeforeSending(err);
    return { status: 0, text: `could not be reached: ${String((err as Error)?.message ?? err)}`, json: null, ...(notSent ? { notSent } : {}) };
  }
  const text = await res.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: the message falls back to the text
  }
  return { status: res.status, text, json, retryAfterMs: retryAfterMs(res.headers.get("retry-after")) };
}

/** Originate retries: at most `attempts` requests, and at most `maxWaitMs` spent waiting between them. */
export type RetryPolicy = { attempts: number; maxWaitMs: number };
export const ORIGINATE_RETRY: RetryPolicy = { attempts: 3, maxWaitMs: 5_000 };
/** The first wait when the carrier names none; doubled for each further attempt. */
export const RETRY_BACKOFF_MS = 500;

/**
 * True only when the carrier certainly placed no call: 429, a 503 that
 * names no call, or a connection that failed before the request was sent. A timeout after sending and a
 * 500 are ambiguous (the call may exist), so they are never retried.
 */
export function certainlyNotPlaced(res: CarrierResponse, callIdOf: (json: any) => unknown): boolean {
  if (res.status === 0) return res.notSent === true;
  if (res.status === 429) return true;
  if (res.status === 503) {
    const id = callIdOf(res.json);
    return !(typeof id === "string" && id !== "");
  }
  return false;
}

/**
 * The originate request, repeated with bounded backoff while `certainlyNotPlaced` holds: the carrier's
 * `Retry-After` is honoured, and a wait that would overrun the policy's budget ends the retries instead
 * (the refusal is reported; a campaign retries later on its own schedule). `init` may be a function, for
 * carriers whose credentials are minted per request (Vonage's JWT).
 */
export async function originateFetch(
  url: string,
  init: RequestInit | (() => Promise<RequestInit>),
  env: Pick<ProviderEnv, "carrierTimeoutMs" | "originateRetry">,
  callIdOf: (json: any) => unknown,
  fetcher: typeof fetch = fetch,
): Promise<CarrierResponse> {
  const policy = { ...ORIGINATE_RETRY, ...env?.originateRetry };
  let waited = 0;
  for (let attempt = 1; ; attempt++) {
    const res = await carrierFetch(url, typeof init === "function" ? await init() : init, env, fetcher);
    res.attempts = attempt;
    if (attempt >= policy.attempts || !certainlyNotPlaced(res, callIdOf)) return res;
    const wait = res.retryAfterMs ?? RETRY_BACKOFF_MS * 2 ** (attempt - 1);
    if (waited + wait > policy.maxWaitMs) return res;
    await clock.sleep(wait);
    waited += wait;
  }
}

/**
 * A refused originate in the shape the calls module expects, naming the carrier, the HTTP status and the
 * carrier's error code where it gives one: `Twilio refused the call (HTTP 400, code 21211): …`.
 */
export function refused(carrier: string, res: CarrierResponse, message: string | undefined | null, code?: unknown): OriginateResult {
  const tries = (res.attempts ?? 1) > 1 ? ` (${res.attempts} attempts)` : "";
  if (res.status === 0) return { ok: false, message: `${carrier} ${res.text}${tries}` };
  const text = (message && String(message).trim()) || res.text.trim().slice(0, 300) || `HTTP ${res.status}`;
  const c = code === undefined || code === null || String(code).trim() === "" ? "" : `, code ${String(code).trim()}`;
  return { ok: false, status: res.status, message: `${carrier} refused the call (HTTP ${res.status}${c}): ${text}${tries}` };
}

/** The call the carrier placed: a 2xx whose body names it (`callIdOf`, as given to originateFetch); null for a refusal. */
export function placed(res: CarrierResponse, callIdOf: (json: any) => unknown): OriginateResult | null {
  const id = res.status >= 200 && res.status < 300 ? callIdOf(res.json) : undefined;
  return typeof id === "string" ? { ok: true, providerCallId: id } : null;
}

/** Form fields of a callback body (form-encoded, or JSON where a carrier posts JSON). */
export function formFields(rawBody: string): Array<[string, string]> {
  return [...new URLSearchParams(rawBody).entries()];
}

export function jsonOrNull(rawBody: string): any {
  try {
    return rawBody ? JSON.parse(rawBody) : null;
  } catch {
    return null;
  }
}

/** A non-negative integer from a carrier field ("7", 7), else null. */
export function intOrNull(v: unknown): number | null {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
  return Number.isFinite(n) && n >= 0 ? Math.round(n) : null;
}

export { isMachine } from "../../lib/answered-by";

export const str = (v: unknown): string => (typeof v === "string" ? v : v == null ? "" : String(v));

/** A read-only credentials check's answer: 2xx is ok; otherwise the carrier's message, naming the carrier. */
export function credentialsResult(carrier: string, res: CarrierResponse, message: string | undefined | null): CredentialsCheck {
  if (res.status >= 200 && res.status < 300) return { ok: true };
  if (res.status === 0) return { ok: false, message: `${carrier} ${res.text}` };
  const text = (message && String(message).trim()) || res.text.trim().slice(0, 300) || `HTTP ${res.status}`;
  return { ok: false, message: `${carrier} rejected the credentials (HTTP ${res.status}): ${text}` };
}
