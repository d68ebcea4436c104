// Personal data taken out of a call's stored text (an organization's calling_policies.redact_pii): card numbers
// (13-19 digits that pass the Luhn check, so an order number of the same length stays), email addresses, phone
// numbers (7-15 digits, written the ways people and models write them), and the values of the agent's extraction
// variables marked `sensitive`. Pure: the session applies it before anything is stored, so the API, webhooks and
// the analysis only ever see the redacted text.

export const REDACTED = {
  card: "[card number]",
  email: "[email]",
  phone: "[phone number]",
  sensitive: "[redacted]",
} as const;

/** Whether a run of digits passes the Luhn check (every card number does; most other numbers do not). */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

// Digits in groups separated by single spaces or dashes (card numbers are read out as 4-4-4-4, 4-6-5, ...).
const CARD = /(?<![\d])\d(?:[ -]?\d){12,18}(?![\d])/g;
const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
// An optional +, then digits with spaces, dots, dashes or parentheses between them; 7 to 15 digits in all (E.164's
// most). Shorter runs are amounts, times and seat counts, which a transcript needs.
const PHONE = /(?<![\w+])\+?\(?\d(?:[ .()-]{0,2}\d){6,14}(?![\d])/g;

const digitsOf = (s: string) => s.replace(/\D/g, "");

/** What the agent's extraction variables marked sensitive gathered, as text to find in a transcript. */
export type SensitiveValues = readonly string[];

/** A text with its card numbers, emails, phone numbers and sensitive values replaced by markers. */
export function redactText(text: string, sensitive: SensitiveValues = []): string {
  let out = text;
  // Longest first, so a value that contains another is replaced whole.
  for (const v of [...sensitive].filter((v) => v.trim().length >= 2).sort((a, b) => b.length - a.length)) {
    out = out.split(v).join(REDACTED.sensitive);
  }
  out = out.replace(CARD, (m) => (luhnValid(digitsOf(m)) ? REDACTED.card : m));
  out = out.replace(EMAIL, REDACTED.email);
  out = out.replace(PHONE, (m) => {
    // A date (2026-12-01) is the length of a phone number; an analysis' callback time needs it.
    if (/^\d{4}[-.]\d{2}[-.]\d{2}$/.test(m)) return m;
    const n = digitsOf(m).length;
    return n >= 7 && n <= 15 ? REDACTED.phone : m;
  });
  return out;
}

/** Every string inside a JSON value redacted (a tool call's arguments); keys named sensitive lose their value. */
export function redactValue(value: unknown, sensitive: SensitiveValues = [], sensitiveKeys: ReadonlySet<string> = new Set()): unknown {
  if (typeof value === "string") return redactText(value, sensitive);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, sensitive, sensitiveKeys));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, sensitiveKeys.has(k) && v != null ? REDACTED.sensitive : redactValue(v, sensitive, sensitiveKeys)]),
    );
  }
  return value;
}

/** The gathered values as text (what a transcript would say), for the sensitive variables among them. */
export function sensitiveValuesOf(gathered: Record<string, unknown> | null | undefined, names: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(gathered ?? {})) {
    if (!names.has(k) || v == null || typeof v === "object") continue;
    out.push(String(v));
  }
  return out;
}
