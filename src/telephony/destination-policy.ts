// An organization's destination policy: which E.164 numbers it may dial. Pure: the policy and
// the numbers' classification come in, a verdict goes out. Storage and the HTTP API are in calling-policy.ts.
// A PBX's destinations (ari) have their number extracted first (pbx-destinations.ts) and are judged by the same rules.
import { getCountries, type CountryCode, type PhoneNumberType } from "libphonenumber-js/max";
import { classifyE164, type E164Info } from "./numbers";

/**
 * libphonenumber's types, plus the ITU's non-geographic codes split into satellite and other global services.
 * Ordinary types first; from premium_rate on, the types refused by default (DEFAULT_BLOCKED_TYPES).
 */
export const NUMBER_TYPES = [
  "fixed_line",
  "mobile",
  "fixed_line_or_mobile",
  "toll_free",
  "voip",
  "voicemail",
  "premium_rate",
  "shared_cost",
  "personal_number",
  "uan",
  "pager",
  "satellite",
  "global_service",
] as const;
export type DestinationType = (typeof NUMBER_TYPES)[number];

/**
 * Refused unless the organization says otherwise: the types whose calls are charged above ordinary rates or are
 * the usual targets of toll fraud (revenue-sharing numbers, satellite networks, international global services).
 */
export const DEFAULT_BLOCKED_TYPES: readonly DestinationType[] = NUMBER_TYPES.slice(NUMBER_TYPES.indexOf("premium_rate"));

const TYPE_NAMES: Record<DestinationType, string> = {
  fixed_line: "fixed-line",
  mobile: "mobile",
  fixed_line_or_mobile: "fixed-line or mobile",
  toll_free: "toll-free",
  voip: "VoIP",
  voicemail: "voicemail access",
  premium_rate: "premium-rate",
  shared_cost: "shared-cost",
  personal_number: "personal (follow-me)",
  uan: "universal access (UAN)",
  pager: "pager",
  satellite: "satellite",
  global_service: "international global service",
};

export const COUNTRY_CODES: ReadonlySet<string> = new Set(getCountries());

// Satellite networks: Inmarsat (+870), the global mobile satellite systems (+881: Iridium, Globalstar, ...), and
// Thuraya, which sits in the international networks code (+882 16).
const SATELLITE = /^\+(870|881|88216)/;

const TYPE_OF: Record<PhoneNumberType, DestinationType> = {
  FIXED_LINE: "fixed_line",
  MOBILE: "mobile",
  FIXED_LINE_OR_MOBILE: "fixed_line_or_mobile",
  TOLL_FREE: "toll_free",
  VOIP: "voip",
  VOICEMAIL: "voicemail",
  PREMIUM_RATE: "premium_rate",
  SHARED_COST: "shared_cost",
  PERSONAL_NUMBER: "personal_number",
  UAN: "uan",
  PAGER: "pager",
};

/** The policy's view of one number: its region (null for the non-geographic codes) and type. */
export function destinationOf(info: E164Info): { country: string | null; type: DestinationType } {
  if (info.country === null) return { country: null, type: SATELLITE.test(info.number) ? "satellite" : "global_service" };
  return { country: info.country, type: info.type ? TYPE_OF[info.type] : "fixed_line_or_mobile" };
}

/** The policy as it applies now: defaults resolved. */
export type EffectivePolicy = {
  allowedCountries: ReadonlySet<string>;
  /** "policy" when the organization set the list, "caller_ids" when it is the default. */
  countriesSource: "policy" | "caller_ids";
  blockedTypes: ReadonlySet<DestinationType>;
  /** E.164 numbers dialed whatever their country or type. */
  allowedNumbers: ReadonlySet<string>;
};

export type StoredPolicy = {
  allowedCountries: string[] | null;
  blockedNumberTypes: DestinationType[] | null;
  allowedNumbers: string[];
};

/** The countries of the organization's caller IDs (E.164 ones; extensions and SIP URIs have none). */
export function callerIdCountries(addresses: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const a of addresses) {
    const info = classifyE164(a);
    if (info?.country) out.add(info.country);
  }
  return [...out].sort();
}

/** Applies the defaults: no country list = the countries of the caller IDs; no type list = DEFAULT_BLOCKED_TYPES. */
export function effectivePolicy(stored: StoredPolicy | null, callerIds: Iterable<string>): EffectivePolicy {
  const countries = stored?.allowedCountries ?? null;
  return {
    allowedCountries: new Set(countries ?? callerIdCountries(callerIds)),
    countriesSource: countries ? "policy" : "caller_ids",
    blockedTypes: new Set(stored?.blockedNumberTypes ?? DEFAULT_BLOCKED_TYPES),
    allowedNumbers: new Set(stored?.allowedNumbers ?? []),
  };
}

export type Refusal = {
  /** The last two are a PBX's (pbx-destinations.ts): a dial string of a form not allowed, a number of no country. */
  reason: "number_type_blocked" | "country_not_allowed" | "dial_string_not_allowed" | "number_not_classifiable";
  message: string;
  ctx: Record<string, unknown>;
};

export const REFUSED_TYPE = "destination_not_allowed";
const CHANGE_IT = "change it with PUT /api/v1/organizations/calling-policy";

let regionNames: Intl.DisplayNames | null | undefined;
function countryName(code: string): string {
  try {
    regionNames ??= new Intl.DisplayNames(["en"], { type: "region" });
    return regionNames.of(code) ?? code;
  } catch {
    regionNames = null;
    return code;
  }
}

/**
 * Null when `number` (normalized) may be dialed, else why not. The type is judged first: a premium-rate number is
 * refused as such even in an allowed country. Numbers of the non-geographic codes have no country, so only their
 * type applies.
 */
export function checkDestination(number: string, policy: EffectivePolicy): Refusal | null {
  if (!number.startsWith("+") || policy.allowedNumbers.has(number)) return null;
  const info = classifyE164(number);
  // Unreachable for a number that passed parseE164; refusing is the careful answer anyway.
  if (!info)
    return {
      reason: "number_type_blocked",
      message: `${number} is not a number this organization's calling policy can classify`,
      ctx: { reason: "number_type_blocked" },
    };
  const { country, type } = destinationOf(info);
  if (policy.blockedTypes.has(type)) {
    return {
      reason: "number_type_blocked",
      message: `${number} is a ${TYPE_NAMES[type]} number, which this organization's calling policy refuses (blocked_number_types; ${CHANGE_IT})`,
      ctx: { reason: "number_type_blocked", number_type: type, country },
    };
  }
  if (country !== null && !policy.allowedCountries.has(country)) {
    const allowed = [...policy.allowedCountries].sort();
    const list = allowed.length ? allowed.join(", ") : "none";
    const source =
      policy.countriesSource === "policy"
        ? "its allowed_countries"
        : allowed.length
          ? "by default, the countries of its caller IDs"
          : "by default the countries of its caller IDs, and it has no E.164 caller ID";
    return {
      reason: "country_not_allowed",
      message: `Calls to ${countryName(country)} (${country}) are not allowed by this organization's calling policy: allowed countries are ${list} (${source}); ${CHANGE_IT}`,
      ctx: { reason: "country_not_allowed", country, number_type: type, allowed_countries: allowed },
    };
  }
  return null;
}

export const isCountryCode = (code: string): code is CountryCode => COUNTRY_CODES.has(code);
