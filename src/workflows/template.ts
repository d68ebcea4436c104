// Template variables: `{{name}}` or `{{ name }}` in prompts and greetings, filled from a call's
// initial_context. Pure functions: campaigns use the extracted set to check CSV columns, calls use the renderer.
import { isObject, type Obj } from "../lib/helpers";

/** `{{ name }}`: an identifier (letters, digits, `_`, `.` for nested keys, `-`), optionally padded with spaces. */
const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

/** Keys of node data whose text the agent speaks or follows; nested keys such as `extraction_prompt` count too. */
const TEMPLATED_KEY = /prompt|greeting/i;

// JSON can't be cyclic, but a guard keeps a pathological definition from exhausting the stack.
const MAX_DEPTH = 64;

function collect(value: unknown, out: Set<string>, depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (typeof value === "string") {
    for (const m of value.matchAll(VARIABLE)) out.add(m[1]);
  } else if (Array.isArray(value)) {
    for (const v of value) collect(v, out, depth + 1);
  } else if (isObject(value)) {
    for (const v of Object.values(value)) collect(v, out, depth + 1);
  }
}

/** Every variable named in a string, or in any string nested in arrays and objects; first-seen order, no repeats. */
export function extractVariables(value: unknown): string[] {
  const out = new Set<string>();
  collect(value, out, 0);
  return [...out];
}

function collectTemplated(value: unknown, out: Set<string>, depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (Array.isArray(value)) {
    for (const v of value) collectTemplated(v, out, depth + 1);
  } else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (TEMPLATED_KEY.test(k)) collect(v, out, depth + 1);
      else collectTemplated(v, out, depth + 1);
    }
  }
}

/** The variables an agent's prompts and greetings use: the set a campaign's CSV columns must provide. */
export function templateVariables(definition: unknown): string[] {
  const out = new Set<string>();
  if (isObject(definition) && Array.isArray(definition.nodes)) {
    for (const node of definition.nodes) if (isObject(node)) collectTemplated(node.data, out, 0);
  }
  return [...out];
}

/** The Start node's greeting (null when there is none), the text a call speaks first. */
export function startGreeting(definition: unknown): string | null {
  if (!isObject(definition) || !Array.isArray(definition.nodes)) return null;
  const start = definition.nodes.find((n) => isObject(n) && n.type === "startCall") as Obj | undefined;
  const greeting = start && isObject(start.data) ? start.data.greeting : undefined;
  return typeof greeting === "string" && greeting.trim() ? greeting : null;
}

/** Looks a name up exactly, then case-insensitively (CSV headers compare that way), then as a dotted path. */
function lookup(context: Obj, name: string): unknown {
  if (Object.hasOwn(context, name)) return context[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(context)) if (k.toLowerCase() === lower) return context[k];
  if (!name.includes(".")) return undefined;
  let cur: unknown = context;
  for (const part of name.split(".")) {
    if (!isObject(cur) || !Object.hasOwn(cur, part)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/** The variables of `required` that `context` does not provide (absent or null), found the way rendering finds them. */
export function missingVariables(required: readonly string[], context: Record<string, unknown> | null | undefined): string[] {
  const ctx: Obj = isObject(context) ? context : {};
  return required.filter((name) => {
    const value = lookup(ctx, name);
    return value === undefined || value === null;
  });
}

export type Rendered = { text: string; missing: string[] };

/** Fills variables from `context`. A missing one renders as empty text and is listed in `missing` for the caller
 * to report; non-string values render as their JSON text. */
export function renderTemplate(text: string, context: Record<string, unknown> | null | undefined): Rendered {
  const ctx: Obj = isObject(context) ? context : {};
  const missing = new Set<string>();
  const out = text.replace(VARIABLE, (_whole, name: string) => {
    const value = lookup(ctx, name);
    if (value === undefined || value === null) {
      missing.add(name);
      return "";
    }
    return typeof value === "string" ? value : JSON.stringify(value);
  });
  return { text: out, missing: [...missing] };
}

/** Absent, null, or text with nothing but spaces: a value that would be spoken as nothing. */
const isBlank = (v: unknown): boolean => v === undefined || v === null || (typeof v === "string" && v.trim() === "");

/** The agent's default for `name` (template_context_variables): a scalar that is not blank, or undefined. */
function defaultOf(defaults: unknown, name: string): string | number | boolean | undefined {
  if (!isObject(defaults)) return undefined;
  const v = lookup(defaults, name);
  return (typeof v === "string" || typeof v === "number" || typeof v === "boolean") && !isBlank(v) ? v : undefined;
}

/** The variables of `required` the agent gives no default: each call (each CSV row) must give them, not blank. */
export function variablesWithoutDefault(required: readonly string[], defaults: unknown): string[] {
  return required.filter((name) => defaultOf(defaults, name) === undefined);
}

/**
 * `context` with each variable of `required` it leaves blank filled from the agent's defaults (a call's values
 * win; a blank value is no value). The other variables are left as they are, to be reported by blankVariables.
 */
export function withDefaults(required: readonly string[], context: Record<string, unknown> | null | undefined, defaults: unknown): Record<string, unknown> {
  const out: Obj = isObject(context) ? { ...context } : {};
  for (const name of required) {
    if (!isBlank(lookup(out, name))) continue;
    const d = defaultOf(defaults, name);
    if (d !== undefined) out[name] = d;
  }
  return out;
}

/** The variables of `required` that `context` does not give (`missing`: absent or null) or gives blank (`empty`). */
export function blankVariables(required: readonly string[], context: Record<string, unknown> | null | undefined): { missing: string[]; empty: string[] } {
  const ctx: Obj = isObject(context) ? context : {};
  const missing: string[] = [];
  const empty: string[] = [];
  for (const name of required) {
    const v = lookup(ctx, name);
    if (v === undefined || v === null) missing.push(name);
    else if (isBlank(v)) empty.push(name);
  }
  return { missing, empty };
}
