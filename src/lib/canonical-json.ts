// JSON with object keys sorted, so two values compare equal (or hash equal) whatever order their keys came in:
// agent definitions when deciding whether a save is a new version, request bodies behind an Idempotency-Key.

export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
