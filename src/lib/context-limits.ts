// Caps on a run's initial_context: it is stored on the run and served back in every run list, so one oversized
// contact or request would bloat every page. The same caps hold for a single call's body and a CSV contact's cells.
import { z } from "@hono/zod-openapi";

export const MAX_CONTEXT_KEYS = 100;
export const MAX_CONTEXT_BYTES = 16 * 1024;

/** UTF-8 bytes of `value` as JSON. */
export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}

/** A run's initial_context in a request body: template variables within the caps above (null or absent: none). */
export const initialContext = (description: string) =>
  z
    .record(z.string(), z.unknown())
    .refine((v) => Object.keys(v).length <= MAX_CONTEXT_KEYS, { message: `At most ${MAX_CONTEXT_KEYS} keys` })
    .refine((v) => jsonBytes(v) <= MAX_CONTEXT_BYTES, { message: `At most ${MAX_CONTEXT_BYTES} bytes as JSON` })
    .nullable()
    .optional()
    .openapi({ description, maxProperties: MAX_CONTEXT_KEYS });
