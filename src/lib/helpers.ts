// Small helpers more than one part needs, defined once here. A helper one folder alone uses stays in that folder.

/** A JSON object as read from input: string keys, values not yet checked. */
export type Obj = Record<string, unknown>;

/** A non-null object that is not an array (JSON's `{...}`). */
export function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Epoch milliseconds as an ISO 8601 UTC timestamp. */
export const iso = (ms: number): string => new Date(ms).toISOString();

/** A socket's text message parsed as a JSON object; anything else (binary, malformed, not an object) is null. */
export function jsonMessage(data: unknown): Record<string, any> | null {
  if (typeof data !== "string") return null;
  try {
    const v = JSON.parse(data);
    return isObject(v) ? v : null;
  } catch {
    return null;
  }
}
