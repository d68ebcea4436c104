// Phone number rules shared by phone-number records, CSV contacts and single calls.
// Carriers take E.164 only (validated with libphonenumber-js); an ari PBX also takes extensions,
// SIP URIs and dial strings.
import { z } from "@hono/zod-openapi";
import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode, type PhoneNumberType } from "libphonenumber-js/max";
import { ClassCache } from "./e164-classes";

export type NumberKind = "e164" | "extension" | "sip_uri" | "dial_string";
export type NumberResult = { ok: true; value: string; kind: NumberKind } | { ok: false; message: string };

const FORBIDDEN = /[\s,&]/;
const EXTENSION = /^\d{2,15}$/;
const SIP_URI = /^sips?:[^\s@:;]+@[A-Za-z0-9.-]+(:\d{1,5})?(;[^\s]*)?$/i;
// Technology/resource, as Asterisk writes it: PJSIP/1001, PJSIP/+15551234567@trunk, Local/100@default.
const DIAL_STRING = /^[A-Za-z][A-Za-z0-9]*\/[^\s,&]+$/;

/** What the numbering plans say about an E.164 string: its region (none for global services such as +870) and type. */
export type E164Info = { number: string; callingCode: string; country: string | null; type: PhoneNumberType | null };

// With the full ('max') metadata every region has type patterns, so `isValid()` is exactly `getType() !== undefined`:
// asking for the type costs nothing extra.
/** libphonenumber-js's verdict: the region and type of `raw` when it is a valid number written exactly in E.164. */
export function analyzeE164Full(raw: string): E164Info | null {
  const parsed = parsePhoneNumberFromString(raw);
  const type = parsed?.getType();
  return parsed && type && parsed.number === raw ? { number: raw, callingCode: parsed.countryCallingCode, country: parsed.country ?? null, type } : null;
}

// Parsing is the costliest step of an import (8-10 µs a number): numbers that provably parse alike share one parse
// (e164-classes.ts). The last answer is kept too, because a CSV row's number is checked and then classified by the
// destination policy right after.
const classes = new ClassCache(analyzeE164Full, (info, raw) => ({ number: raw, callingCode: info.callingCode, country: info.country, type: info.type }));
let lastRaw: string | null = null;
let lastInfo: E164Info | null = null;

/** `analyzeE164Full`, answered from the class cache where it can be. */
export function analyzeE164(raw: string): E164Info | null {
  if (lastRaw === raw) return lastInfo;
  lastInfo = classes.get(raw);
  lastRaw = raw;
  return lastInfo;
}

/** The region and type of a valid E.164 number (as normalized by parseE164); null for anything else. */
export function classifyE164(e164: string): E164Info | null {
  return e164.startsWith("+") ? analyzeE164(e164) : null;
}

/** E.164 with a leading +, checked against real numbering plans. */
export function parseE164(raw: string): NumberResult {
  // A valid number is "+<digits>" exactly, so the checks below only explain a refusal.
  if (raw.charCodeAt(0) === 43 /* + */ && analyzeE164(raw)) return { ok: true, value: raw, kind: "e164" };
  if (FORBIDDEN.test(raw)) return { ok: false, message: "Phone number must not contain spaces, commas or ampersands" };
  if (!raw.startsWith("+")) return { ok: false, message: "Phone number must be in E.164 format (+ and country code)" };
  if (!analyzeE164(raw)) return { ok: false, message: "Phone number is not a valid E.164 number" };
  return { ok: true, value: raw, kind: "e164" };
}

/**
 * Normalizes a number for a provider family. `pbx` is true for ari configurations.
 * The returned value is what uniqueness is judged on.
 */
export function normalizeNumber(raw: string, pbx: boolean): NumberResult {
  const value = raw.trim();
  if (value === "") return { ok: false, message: "Phone number is empty" };
  if (!pbx) return parseE164(value);
  if (FORBIDDEN.test(value)) return { ok: false, message: "Phone number must not contain spaces, commas or ampersands" };
  if (value.startsWith("+")) return parseE164(value);
  if (EXTENSION.test(value)) return { ok: true, value, kind: "extension" };
  if (SIP_URI.test(value)) return { ok: true, value: value.replace(/^sips?:/i, (s) => s.toLowerCase()), kind: "sip_uri" };
  if (DIAL_STRING.test(value)) return { ok: true, value, kind: "dial_string" };
  return { ok: false, message: "Must be an E.164 number, an extension, a SIP URI or a dial string" };
}

/** An ISO 3166 alpha-2 code the numbering plans know (case-insensitive), e.g. `US`. */
export function isKnownCountry(code: string): boolean {
  return /^[A-Za-z]{2}$/.test(code) && isSupportedCountry(code.toUpperCase());
}

/**
 * A national number (`(415) 555-0102`) as E.164 for `country`, or null when it is not a valid number there.
 * Only numbers without a leading + are read as national: an explicit country code is never second-guessed.
 */
export function nationalToE164(raw: string, country: string): string | null {
  const value = raw.trim();
  if (value.startsWith("+") || !isKnownCountry(country)) return null;
  const parsed = parsePhoneNumberFromString(value, country.toUpperCase() as CountryCode);
  return parsed?.isValid() ? parsed.number : null;
}

/** How a number is read when it may be national: the request's `default_country`, and a country to suggest. */
export type NumberReading = {
  /** ISO 3166 alpha-2: a number without + is read as a national number of this country (carriers only). */
  defaultCountry?: string | null;
  /** Without default_country: the country whose E.164 form is suggested for a national number (the caller ID's). */
  suggestCountry?: string | null;
};

export type DialableResult = NumberResult | { ok: false; message: string; ctx?: { suggestion: string; country: string } };

const NOT_E164 = "Phone number must be in E.164 format (+ and country code)";

/**
 * One rule for single calls and CSV contacts: with `defaultCountry` a national number becomes its E.164 form (a
 * PBX's short numbers stay extensions); a number that is not dialable says why, and a national number that would
 * be valid in `suggestCountry` gets its E.164 form suggested.
 */
export function readDialable(raw: string, pbx: boolean, how: NumberReading = {}): DialableResult {
  const national = !pbx && !raw.trim().startsWith("+");
  const converted = national && how.defaultCountry ? nationalToE164(raw, how.defaultCountry) : null;
  const number = normalizeNumber(converted ?? raw, pbx);
  if (number.ok || !national || raw.trim() === "") return number;
  if (how.defaultCountry) return { ok: false, message: `${NOT_E164}, and it is not a valid ${how.defaultCountry.toUpperCase()} number either` };
  const country = how.suggestCountry ?? null;
  const suggestion = country ? nationalToE164(raw, country) : null;
  if (!country || !suggestion) return number;
  return { ok: false, message: `${NOT_E164}: did you mean ${suggestion}? (or send default_country "${country}")`, ctx: { suggestion, country } };
}

/** The optional `default_country` of a single call or a campaign: an ISO 3166 alpha-2 code the numbering plans know. */
export const DefaultCountry = z
  .string()
  .refine(isKnownCountry, { message: "Unknown country: expected an ISO 3166 alpha-2 code such as US" })
  .nullable()
  .optional()
  // isKnownCountry's shape, for the document (which codes the numbering plans know is the refine's).
  .openapi({ pattern: "^[A-Za-z]{2}$" });
