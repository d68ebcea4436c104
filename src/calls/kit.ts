// Small helpers shared by the provider call modules: carrier HTTP with a timeout, auth headers,
// number formats, XML escaping. Carrier-specific behaviour stays in each provider folder.
import type { OriginateResult, ProviderEnv, ProviderName } from "../telephony/providers/types";
import { base64Encode } from "../lib/crypto";

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

/** Text content / attribute value escaping for the XML answer documents. */
export function xmlEscape(text: string): string {
  return text.replace(/[<>&"']/g, (ch) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[ch]!);
}

export type CarrierResponse = { status: number; text: string; json: any };

/**
 * One carrier request with a timeout. Network errors and timeouts come back as status 0 so the
 * caller can report them in the contract's terms (a 502 for single calls, `failed` on the run).
 * Pass the provider env so a deployment (or the test pool) can shorten the wait; the default is 10 s.
 */
export async function carrierFetch(url: string, init: RequestInit, env: Pick<ProviderEnv, "carrierTimeoutMs">): Promise<CarrierResponse> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(env?.carrierTimeoutMs ?? CARRIER_TIMEOUT_MS) });
  } catch (err) {
    const timedOut = (err as Error)?.name === "TimeoutError" || (err as Error)?.name === "AbortError";
    return { status: 0, text: timedOut ? "Carrier request timed out" : `Carrier unreachable: ${String((err as Error)?.message ?? err)}`, json: null };
  }
  const text = await res.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: the message falls back to the text
  }
  return { status: res.status, text, json };
}

/** A refused originate in the shape the calls module expects; `message` is the carrier's own words. */
export function refused(res: CarrierResponse, message: string | undefined | null): OriginateResult {
  if (res.status === 0) return { ok: false, message: res.text };
  const text = (message && String(message).trim()) || res.text.trim().slice(0, 300) || `HTTP ${res.status}`;
  return { ok: false, status: res.status, message: `Carrier refused the call (HTTP ${res.status}): ${text}` };
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

/** AMD verdicts that mean a machine answered (Twilio names, and the plain words other carriers use). */
export function isMachine(answeredBy: string | null | undefined): boolean {
  if (!answeredBy) return false;
  const v = answeredBy.toLowerCase();
  return v.startsWith("machine") || v === "fax" || v === "voicemail";
}

export const str = (v: unknown): string => (typeof v === "string" ? v : v == null ? "" : String(v));
