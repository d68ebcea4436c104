// Sensitive configuration values at rest: one AES-GCM envelope per dotted field path, stored with its mask
// so reads (which only show masks) never decrypt. The AAD binds each envelope to its organization and
// field, so an envelope copied into another row or field does not open.
import { isEnvelope, type Envelope, type SecretBox } from "../lib/secret-box";
import { maskSecret } from "../lib/mask";

export type StoredSecret = Envelope & { mask: string };
export type SecretMap = Record<string, StoredSecret>;

const aad = (orgId: number, path: string) => `edgedial/telephony/${orgId}/${path}`;

export async function sealSecret(box: SecretBox, orgId: number, path: string, value: string): Promise<StoredSecret> {
  return { ...(await box.encrypt(value, aad(orgId, path))), mask: maskSecret(value) };
}

export function storedSecrets(raw: unknown): SecretMap {
  const out: SecretMap = {};
  if (raw && typeof raw === "object") {
    for (const [path, v] of Object.entries(raw)) if (isEnvelope(v)) out[path] = { ...v, mask: String((v as StoredSecret).mask ?? "") };
  }
  return out;
}

export async function openSecrets(box: SecretBox, orgId: number, secrets: SecretMap): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [path, env] of Object.entries(secrets)) out[path] = await box.decrypt(env, aad(orgId, path));
  return out;
}

/** Re-seals an envelope sealed under an older key (the write path of key rotation). */
export function rekeySecret(box: SecretBox, orgId: number, path: string, secret: StoredSecret): Promise<StoredSecret> {
  return box.rekey(secret, aad(orgId, path));
}
