// Caps on a run's initial_context: it is stored on the run and served back in every run list, so one oversized
// contact or request would bloat every page. The same caps hold for a single call's body and a CSV contact's cells.

export const MAX_CONTEXT_KEYS = 100;
export const MAX_CONTEXT_BYTES = 16 * 1024;

/** UTF-8 bytes of `value` as JSON. */
export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}
