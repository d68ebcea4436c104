// Shared OpenAPI pieces: the error shapes and id path parameters.
import { z } from "@hono/zod-openapi";
import { NOT_FOUND_ISSUE } from "./errors";

export const ErrorSchema = z.object({ detail: z.string() }).openapi("Error");

export const ValidationErrorSchema = z
  .object({
    detail: z.array(
      z.object({
        loc: z.array(z.union([z.string(), z.number().int()])),
        msg: z.string(),
        type: z.string(),
        input: z.unknown().optional(),
        ctx: z.record(z.string(), z.unknown()).optional(),
      }),
    ),
  })
  .openapi("ValidationError");

const DESCRIPTIONS: Record<number, string> = {
  401: "Missing or invalid API key",
  404: "Not found (or another organization's)",
  409: "Conflict with the current state",
  413: "Payload too large",
  415: "Unsupported media type",
  422: "Invalid input",
  429: "Too many requests",
  502: "The carrier refused or could not be reached",
  503: "Service degraded",
};

/** The error responses an operation can give, for its OpenAPI entry. */
export function errors(...codes: number[]) {
  const out: Record<number, { description: string; content: { "application/json": { schema: typeof ErrorSchema | typeof ValidationErrorSchema } } }> = {};
  for (const code of codes) {
    out[code] = {
      description: DESCRIPTIONS[code] ?? "Error",
      content: { "application/json": { schema: code === 422 ? ValidationErrorSchema : ErrorSchema } },
    };
  }
  return out;
}

export function json<T extends z.ZodTypeAny>(schema: T, description = "OK") {
  return { description, content: { "application/json": { schema } } };
}

/** The largest id a path may name: beyond it a JS number is no longer exact (D1 ids never get there). */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/**
 * `source_url` or its alias `source_id` (at least one; with both, `source_url` wins): the handler's rule, stated in the
 * document as an anyOf of two `required` lists so a client validating against it sends one of them.
 */
export const ONE_OF_SOURCES = { anyOf: [{ required: ["source_url"] }, { required: ["source_id"] }] };

/** An id in a body (an agent, a configuration): a positive integer no larger than any id can be. */
export const refId = () => z.number().int().positive().max(MAX_ID);

/** What a path id names, for its 404 (`Campaign not found`). */
const ID_LABELS: Record<string, string> = {
  campaign_id: "Campaign",
  config_id: "Telephony configuration",
  number_id: "Phone number",
  workflow_id: "Workflow",
  run_id: "Workflow run",
  version_number: "Workflow version",
  key_id: "API key",
};

/**
 * An id in the path: decimal digits only, 1 to MAX_ID. Anything else (`0x10`, `3447e0`, `3447.0`,
 * `+3447`, ` 3447`, `abc`, an id past 2^53) names no resource, so it is the resource's 404, never a 422 or a 500.
 */
export function pathId(name: string, label = ID_LABELS[name] ?? "Resource") {
  return z
    .string()
    .transform((v, ctx) => {
      const n = /^\d{1,16}$/.test(v) ? Number(v) : NaN;
      if (n >= 1 && n <= MAX_ID) return n;
      ctx.addIssue({ code: "custom", message: `${label} not found`, params: { type: NOT_FOUND_ISSUE }, input: v });
      return z.NEVER;
    })
    .openapi({ param: { name, in: "path" }, type: "integer", minimum: 1, maximum: MAX_ID, example: 1, description: "Decimal digits only" });
}

/** An integer id in the path, e.g. `idParam("config_id")`. */
export function idParam<K extends string>(name: K) {
  return z.object({ [name]: pathId(name) } as { [P in K]: ReturnType<typeof pathId> });
}

/** A request's choice of telephony configuration: its id, or null or absent for the organization's default. */
export function configurationChoice(description: string) {
  return refId().nullable().optional().openapi({ description });
}
