// AES-256-GCM for secrets at rest, with key ids so keys can rotate.
// Keys come from the Worker secret ENCRYPTION_KEYS = "id:base64(32 bytes),id2:...": the first key
// encrypts, every listed key decrypts. Rotation: put the new key first, keep the old one listed until
// every row has been rewritten (each write re-encrypts under the first key).
import { base64Decode, base64Encode, randomBytes } from "./crypto";
import { ApiError } from "./errors";
import { invalidKeysProblem, missingSecretProblem, problemsDetail } from "./settings";

/** What is stored: the key id, a fresh 96-bit nonce and the ciphertext with its tag, both base64. */
export type Envelope = { kid: string; iv: string; ct: string };

export class SecretBoxError extends Error {}

type Keyring = { primary: string; keys: Map<string, CryptoKey> };

const enc = new TextEncoder();
const dec = new TextDecoder();
// Imported keys per ENCRYPTION_KEYS value: importKey is not free, and the value rarely changes.
const keyrings = new Map<string, Promise<Keyring>>();

/** Parses "id:base64,id:base64" into raw keys; refuses anything that is not exactly 32 bytes. */
export function parseKeySpec(spec: string | undefined): { kid: string; raw: Uint8Array }[] {
  const parts = (spec ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.length === 0) throw new SecretBoxError("ENCRYPTION_KEYS is not set");
  const seen = new Set<string>();
  return parts.map((part) => {
    const at = part.indexOf(":");
    const kid = at > 0 ? part.slice(0, at) : "";
    if (!/^[A-Za-z0-9_.-]{1,32}$/.test(kid)) throw new SecretBoxError("ENCRYPTION_KEYS: each entry must be id:base64key");
    if (seen.has(kid)) throw new SecretBoxError(`ENCRYPTION_KEYS: duplicate key id ${kid}`);
    seen.add(kid);
    let raw: Uint8Array;
    try {
      raw = base64Decode(part.slice(at + 1));
    } catch {
      throw new SecretBoxError(`ENCRYPTION_KEYS: key ${kid} is not base64`);
    }
    if (raw.length !== 32) throw new SecretBoxError(`ENCRYPTION_KEYS: key ${kid} must be 32 bytes`);
    return { kid, raw };
  });
}

async function importKeyring(spec: string): Promise<Keyring> {
  const parsed = parseKeySpec(spec);
  const keys = new Map<string, CryptoKey>();
  for (const { kid, raw } of parsed) {
    keys.set(kid, await crypto.subtle.importKey("raw", raw, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]));
  }
  return { primary: parsed[0].kid, keys };
}

function keyringFor(spec: string): Promise<Keyring> {
  let ring = keyrings.get(spec);
  if (!ring) {
    ring = importKeyring(spec);
    // A bad spec must not stay cached as a rejected promise forever.
    ring.catch(() => keyrings.delete(spec));
    keyrings.set(spec, ring);
  }
  return ring;
}

export function isEnvelope(v: unknown): v is Envelope {
  const e = v as Envelope;
  return !!e && typeof e === "object" && typeof e.kid === "string" && typeof e.iv === "string" && typeof e.ct === "string";
}

export class SecretBox {
  private constructor(
    private readonly spec: string,
    /** The id of the key new envelopes are sealed with. */
    readonly primaryKid: string,
  ) {}

  static fromSpec(spec: string): SecretBox {
    // Parsing here fails early on a malformed value, before any secret is touched.
    return new SecretBox(spec, parseKeySpec(spec)[0].kid);
  }

  /** The deployment's box; a missing or malformed secret is the server's 503 naming ENCRYPTION_KEYS, never a 500. */
  static fromEnv(env: { ENCRYPTION_KEYS?: string }): SecretBox {
    try {
      return SecretBox.fromSpec(env.ENCRYPTION_KEYS ?? "");
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      const problem = (env.ENCRYPTION_KEYS ?? "").trim() ? invalidKeysProblem(err.message) : missingSecretProblem("ENCRYPTION_KEYS");
      throw new ApiError(503, problemsDetail([problem]));
    }
  }

  /** `aad` binds the ciphertext to where it is stored, so an envelope copied elsewhere fails to open. */
  async encrypt(plaintext: string, aad = ""): Promise<Envelope> {
    const ring = await keyringFor(this.spec);
    const iv = randomBytes(12);
    const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: enc.encode(aad) }, ring.keys.get(ring.primary)!, enc.encode(plaintext));
    return { kid: ring.primary, iv: base64Encode(iv), ct: base64Encode(new Uint8Array(ct)) };
  }

  async decrypt(envelope: Envelope, aad = ""): Promise<string> {
    const ring = await keyringFor(this.spec);
    const key = ring.keys.get(envelope.kid);
    if (!key) throw new SecretBoxError(`No decryption key with id ${envelope.kid}`);
    try {
      const pt = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: base64Decode(envelope.iv), additionalData: enc.encode(aad) },
        key,
        base64Decode(envelope.ct),
      );
      return dec.decode(pt);
    } catch {
      throw new SecretBoxError(`Secret under key ${envelope.kid} failed to decrypt`);
    }
  }

  /** True when the envelope is sealed under an older key and should be rewritten. */
  isStale(envelope: Envelope): boolean {
    return envelope.kid !== this.primaryKid;
  }

  /** Opens an envelope under any listed key and seals it again under the current one (no-op when current). */
  async rekey<E extends Envelope>(envelope: E, aad = ""): Promise<E> {
    if (!this.isStale(envelope)) return envelope;
    const fresh = await this.encrypt(await this.decrypt(envelope, aad), aad);
    return { ...envelope, ...fresh };
  }
}
