// API key material: random, prefixed, hashed at rest, shown once.
import { base64UrlEncode, randomBytes, sha256Hex } from "../lib/crypto";

export const KEY_PREFIX = "edk_";

export async function newApiKey(): Promise<{ key: string; hash: string; last4: string }> {
  const key = KEY_PREFIX + base64UrlEncode(randomBytes(32));
  return { key, hash: await sha256Hex(key), last4: key.slice(-4) };
}
