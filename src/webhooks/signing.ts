// Standard Webhooks signing (https://www.standardwebhooks.com): the secret is `whsec_` + base64 of random bytes; the
// signature is base64(HMAC-SHA256(key = the decoded secret, "{webhook-id}.{webhook-timestamp}.{body}")), sent as `v1,<sig>`.
import { base64Decode, base64Encode, hmac, randomBytes } from "../lib/crypto";

const PREFIX = "whsec_";

/** A fresh signing secret (24 random bytes, within the spec's 24–64). */
export function newSigningSecret(): string {
  return PREFIX + base64Encode(randomBytes(24));
}

/** The masked form lists show: the prefix and the last four characters. */
export const maskSigningSecret = (last4: string) => `${PREFIX}${"*".repeat(8)}${last4}`;

export async function sign(secret: string, id: string, timestampSeconds: number, body: string): Promise<string> {
  const key = base64Decode(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret);
  return `v1,${base64Encode(await hmac(key, `${id}.${timestampSeconds}.${body}`))}`;
}

/** The three headers of a signed request. */
export async function signedHeaders(secret: string, id: string, timestampSeconds: number, body: string): Promise<Record<string, string>> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": await sign(secret, id, timestampSeconds, body),
  };
}
