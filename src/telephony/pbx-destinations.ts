// What an Asterisk (ari) destination really dials, for the calling policy. A PBX takes E.164 numbers, extensions, SIP
// URIs and dial strings, and its trunks reach the public network from any of them: `011449…` or
// `PJSIP/+44…@other-trunk` is an international call like `+44…`. So the number inside is extracted and judged by the
// same policy as every carrier's, and a dial string must have a form the configuration names (docs/carriers.md).
// Pure: the templates and the policy come in.
import { checkDestination, type EffectivePolicy, type Refusal } from "./destination-policy";

/** Digit strings up to this long are the PBX's own extensions (not judged); longer ones reach a trunk. */
export const MAX_EXTENSION_DIGITS = 6;
export const DEFAULT_PBX_TEMPLATE = "PJSIP/{number}";

/** International access prefixes read off a digit string: `00` (ITU) and `011` (North America). */
const INTERNATIONAL = /^(?:00|011)([1-9]\d{6,14})$/;
const NUMBER_PART = /^\+?\d+$/;
const SIP_URI = /^sips?:([^@]+)@/i;
const DIAL_STRING = /^[A-Za-z][A-Za-z0-9]*\//;

/** The dial-string forms an ari configuration allows: its `dial_string_template` and its `allowed_dial_strings`. */
export function pbxTemplates(config: Record<string, unknown> | null | undefined): string[] {
  const main =
    typeof config?.dial_string_template === "string" && config.dial_string_template.includes("{number}") ? config.dial_string_template : DEFAULT_PBX_TEMPLATE;
  const more = Array.isArray(config?.allowed_dial_strings)
    ? config.allowed_dial_strings.filter((t): t is string => typeof t === "string" && t.includes("{number}"))
    : [];
  return [main, ...more];
}

/** The `{number}` of `dial` when it has the form of `template` (technology and context compared case-insensitively). */
function numberIn(dial: string, template: string): string | null {
  const at = template.indexOf("{number}");
  const head = template.slice(0, at).toLowerCase();
  const tail = template.slice(at + "{number}".length).toLowerCase();
  const lower = dial.toLowerCase();
  if (dial.length <= head.length + tail.length || !lower.startsWith(head) || !lower.endsWith(tail)) return null;
  const middle = dial.slice(head.length, dial.length - tail.length);
  return NUMBER_PART.test(middle) ? middle : null;
}

export type PbxNumber = { internal: true } | { internal: false; e164: string } | { refusal: Refusal };

const refusal = (reason: Refusal["reason"], message: string, ctx: Record<string, unknown> = {}): { refusal: Refusal } => ({
  refusal: { reason, message, ctx: { reason, ...ctx } },
});

/** A number as the PBX would dial it: an extension, an E.164 number, or digits after an international prefix. */
function digitsOrE164(value: string): PbxNumber {
  if (value.startsWith("+")) return { internal: false, e164: value };
  if (value.length <= MAX_EXTENSION_DIGITS) return { internal: true };
  const intl = INTERNATIONAL.exec(value);
  if (intl) return { internal: false, e164: `+${intl[1]}` };
  return refusal(
    "number_not_classifiable",
    `${value} is longer than an extension (${MAX_EXTENSION_DIGITS} digits) and has no international prefix (00, 011), so the calling policy cannot tell where it goes: write it in E.164 (+ and country code)`,
  );
}

/**
 * What `value` (normalized for a PBX) dials: internal (an extension, a SIP user that is not a number), a number to
 * classify, or a refusal (a dial string of a form the configuration does not name, a long number without a country).
 */
export function pbxNumber(value: string, templates: readonly string[]): PbxNumber {
  if (/^\+?\d+$/.test(value)) return digitsOrE164(value);
  const sip = SIP_URI.exec(value);
  if (sip) return NUMBER_PART.test(sip[1]) ? digitsOrE164(sip[1]) : { internal: true };
  if (DIAL_STRING.test(value)) {
    for (const t of templates) {
      const n = numberIn(value, t);
      if (n !== null) return digitsOrE164(n);
    }
    return refusal(
      "dial_string_not_allowed",
      `The dial string ${value} has none of the forms this configuration allows (${templates.join(", ")}); add its form to allowed_dial_strings, or send the number alone`,
      { allowed: [...templates] },
    );
  }
  return { internal: true };
}

/** checkDestination for a PBX destination: its number extracted first, then judged like any carrier's. */
export function checkPbxDestination(value: string, templates: readonly string[], policy: EffectivePolicy): Refusal | null {
  const n = pbxNumber(value, templates);
  if ("refusal" in n) return n.refusal;
  if (n.internal) return null;
  if (policy.allowedNumbers.has(n.e164)) return null;
  return checkDestination(n.e164, policy);
}

/** A configuration's dial-string forms when it is a PBX's (ari), else null (a carrier dials E.164 only). */
export function pbxTemplatesOf(cfg: { provider: { pbx: boolean }; row: { config: unknown } }): string[] | null {
  return cfg.provider.pbx ? pbxTemplates(cfg.row.config as Record<string, unknown> | null) : null;
}
