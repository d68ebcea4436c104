// A webhook node's body: its `payload_template` (any JSON) with `{{path}}` filled from the call's values. A string
// that is exactly one placeholder takes the value itself (an object, a list, a number stay what they are); a
// placeholder inside longer text is replaced by the value as text. Paths are dotted (`gathered_context.seats`); a
// missing value is null (or empty text). Pure.
import { isObject } from "../lib/helpers";

const ONE = /^\s*\{\{\s*([\w.-]+)\s*\}\}\s*$/;
const ANY = /\{\{\s*([\w.-]+)\s*\}\}/g;

/** The value at a dotted path (a key with dots in it is tried whole first). */
export function lookup(values: Record<string, unknown>, path: string): unknown {
  if (path in values) return values[path];
  let v: unknown = values;
  for (const part of path.split(".")) {
    if (Array.isArray(v) && /^\d+$/.test(part)) v = v[Number(part)];
    else if (isObject(v) && part in v) v = v[part];
    else return undefined;
  }
  return v;
}

const asText = (v: unknown): string => (v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v));

/** The template with every placeholder filled. */
export function renderPayload(template: unknown, values: Record<string, unknown>): unknown {
  if (typeof template === "string") {
    const one = ONE.exec(template);
    if (one) return lookup(values, one[1]) ?? null;
    return template.replace(ANY, (_m, path: string) => asText(lookup(values, path)));
  }
  if (Array.isArray(template)) return template.map((t) => renderPayload(t, values));
  if (isObject(template)) return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, renderPayload(v, values)]));
  return template;
}

/** The placeholders a template uses, in order, once each. */
export function placeholders(template: unknown): string[] {
  const out = new Set<string>();
  const walk = (t: unknown) => {
    if (typeof t === "string") for (const m of t.matchAll(ANY)) out.add(m[1]);
    else if (Array.isArray(t)) t.forEach(walk);
    else if (isObject(t)) Object.values(t).forEach(walk);
  };
  walk(template);
  return [...out];
}
