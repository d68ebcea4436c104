// Masking of sensitive values: `*` for all but the last 4 characters; 4 or fewer: all `*`.
// Counted in code points so a secret with non-ASCII characters is never cut inside a character.

export function maskSecret(value: string): string {
  const chars = Array.from(value);
  if (chars.length <= 4) return "*".repeat(chars.length);
  return "*".repeat(chars.length - 4) + chars.slice(-4).join("");
}

/** A value a client copied from a response rather than typed: it starts like a mask. */
export function looksMasked(value: string): boolean {
  return value.startsWith("***");
}

export type MaskedInput = { kind: "keep" } | { kind: "new"; value: string } | { kind: "invalid" };

/**
 * Classifies a sensitive value sent by a client against the stored secret's mask (null when none is stored):
 * the current mask keeps the stored secret, another mask-looking value is a mistake, anything else is new.
 */
export function classifySecretInput(value: string, currentMask: string | null): MaskedInput {
  if (currentMask !== null && value === currentMask) return { kind: "keep" };
  if (looksMasked(value)) return { kind: "invalid" };
  return { kind: "new", value };
}
