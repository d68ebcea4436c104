// The contract's error shapes: `detail` is a string, or for 422 a list of located items.
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { $ZodIssue } from "zod/v4/core";

export type Loc = (string | number)[];
export type ValidationItem = {
  loc: Loc;
  msg: string;
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
};

/** The longest string a 422 item echoes back as its `input`; longer ones are cut, with a marker saying so. */
export const MAX_ECHOED_STRING = 200;
/** An object or array echoed as `input` whose JSON is longer than this is summarized instead. */
export const MAX_ECHOED_JSON = 1000;

/** A rejected value as a 422 item may echo it: a 10 MB name must not come back as a 10 MB response. */
export function boundedInput(input: unknown): unknown {
  if (typeof input === "string") {
    return input.length > MAX_ECHOED_STRING ? `${input.slice(0, MAX_ECHOED_STRING)}…[truncated; ${input.length} characters]` : input;
  }
  if (input === null || typeof input !== "object") return input;
  let size: number;
  try {
    size = JSON.stringify(input)?.length ?? 0;
  } catch {
    size = Infinity;
  }
  if (size <= MAX_ECHOED_JSON) return input;
  return Array.isArray(input) ? `[array of ${input.length} items; truncated]` : `{object with ${Object.keys(input).length} keys; truncated}`;
}

export class ApiError extends Error {
  readonly detail: string | ValidationItem[];

  constructor(
    readonly status: ContentfulStatusCode,
    detail: string | ValidationItem[],
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === "string" ? detail : "Validation error");
    this.detail = typeof detail === "string" ? detail : detail.map((i) => ("input" in i ? { ...i, input: boundedInput(i.input) } : i));
  }
}

export const notFound = (what: string) => new ApiError(404, `${what} not found`);
export const conflict = (message: string) => new ApiError(409, message);
export const unprocessable = (items: ValidationItem[]) => new ApiError(422, items);

/** One located 422 item, for checks zod cannot express (uniqueness against storage, CSV rows, ...). */
export function invalid(loc: Loc, msg: string, type = "value_error", input?: unknown, ctx?: Record<string, unknown>): ApiError {
  const item: ValidationItem = { loc, msg, type };
  if (input !== undefined) item.input = input;
  if (ctx !== undefined) item.ctx = ctx;
  return unprocessable([item]);
}

function valueAt(data: unknown, path: PropertyKey[]): unknown {
  let cur: unknown = data;
  for (const key of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

const typeNames: Record<string, string> = {
  string: "string_type",
  number: "number_type",
  int: "int_type",
  boolean: "bool_type",
  object: "model_type",
  array: "list_type",
};

function issueType(issue: $ZodIssue, input: unknown): { type: string; msg?: string; ctx?: Record<string, unknown> } {
  // zod reports an absent field by what it expected (a type, an enum option, a union member): all are "missing".
  const absentable = issue.code === "invalid_type" || issue.code === "invalid_value" || issue.code === "invalid_union";
  if (absentable && input === undefined) return { type: "missing", msg: "Field required" };
  switch (issue.code) {
    case "invalid_type":
      return { type: typeNames[issue.expected] ?? `${issue.expected}_type` };
    case "too_small": {
      const min = Number(issue.minimum);
      if (issue.origin === "string") return { type: "string_too_short", ctx: { min_length: min } };
      if (issue.origin === "array" || issue.origin === "set") return { type: "too_short", ctx: { min_length: min } };
      return issue.inclusive === false ? { type: "greater_than", ctx: { gt: min } } : { type: "greater_than_equal", ctx: { ge: min } };
    }
    case "too_big": {
      const max = Number(issue.maximum);
      if (issue.origin === "string") return { type: "string_too_long", ctx: { max_length: max } };
      if (issue.origin === "array" || issue.origin === "set") return { type: "too_long", ctx: { max_length: max } };
      return issue.inclusive === false ? { type: "less_than", ctx: { lt: max } } : { type: "less_than_equal", ctx: { le: max } };
    }
    case "invalid_value":
      return { type: issue.values.length === 1 ? "literal_error" : "enum", ctx: { expected: issue.values } };
    case "invalid_union":
      return { type: "discriminator" in issue && issue.discriminator ? "union_tag_invalid" : "union_error" };
    case "invalid_format":
      return { type: "string_pattern_mismatch", ctx: { format: issue.format } };
    case "custom":
      return { type: (issue.params?.type as string | undefined) ?? "value_error" };
    default:
      return { type: "value_error" };
  }
}

function extraItem(prefix: Loc, path: PropertyKey[], data: unknown): ValidationItem {
  const item: ValidationItem = {
    loc: [...prefix, ...path.map((p) => (typeof p === "number" ? p : String(p)))],
    msg: "Extra inputs are not permitted",
    type: "extra_forbidden",
  };
  const input = valueAt(data, path);
  if (input !== undefined) item.input = input;
  return item;
}

/** zod issues -> the API's 422 items; `prefix` is `body`, `path`, `query` or `header` (plus any parent path). */
export function zodIssuesToItems(issues: readonly $ZodIssue[], prefix: Loc, data: unknown): ValidationItem[] {
  return issues.flatMap((issue) => {
    // A strict object names every unknown key in one issue: one item per key, located at the key itself.
    if (issue.code === "unrecognized_keys") return issue.keys.map((key) => extraItem(prefix, [...issue.path, key], data));
    let path = [...issue.path];
    // A bad discriminator is reported on the discriminator field itself, e.g. ["body","config","provider"].
    if (issue.code === "invalid_union" && "discriminator" in issue && issue.discriminator && path[path.length - 1] !== issue.discriminator) {
      path = [...path, issue.discriminator];
    }
    const input = valueAt(data, path);
    const { type, msg, ctx } = issueType(issue, input);
    const item: ValidationItem = {
      loc: [...prefix, ...path.map((p) => (typeof p === "number" ? p : String(p)))],
      msg: msg ?? issue.message,
      type,
    };
    if (input !== undefined) item.input = input;
    if (ctx) item.ctx = ctx;
    return item;
  });
}

/** The issue type of a path value that cannot name anything: the validation hook answers it with a 404. */
export const NOT_FOUND_ISSUE = "not_found";

/** A path parameter that names nothing: the resource's 404, unless a literal route owns the path (then 405). */
export class PathNamesNothing extends ApiError {}
