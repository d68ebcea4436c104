// Shared OpenAPI pieces: the error shapes and id path parameters.
import { z } from "@hono/zod-openapi";

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

/** An integer id in the path, e.g. `idParam("config_id")`. */
export function idParam<K extends string>(name: K) {
  return z.object({
    [name]: z.coerce.number().int().positive().openapi({ param: { name, in: "path" }, example: 1 }),
  } as { [P in K]: z.ZodCoercedNumber<unknown> });
}
