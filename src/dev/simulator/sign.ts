// The simulator's own signing (written from the carriers' documentation independently of the adapters, so a test
// compares two implementations rather than one with itself).
const enc = new TextEncoder();

export function b64(bytes: Uint8Array | ArrayBuffer): string {
  const u = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let s = "";
  for (const b of u) s += String.fromCharCode(b);
  return btoa(s);
}
export const b64url = (bytes: Uint8Array | ArrayBuffer) => b64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
export function unb64(s: string): Uint8Array {
  const n = s.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(n + "=".repeat((4 - (n.length % 4)) % 4)), (c) => c.charCodeAt(0));
}
export const hex = (buf: ArrayBuffer) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");

export async function hmacB64(hash: "SHA-1" | "SHA-256", key: string, data: string): Promise<string> {
  const k = await crypto.subtle.importKey("raw", enc.encode(key), { name: "HMAC", hash }, false, ["sign"]);
  return b64(await crypto.subtle.sign("HMAC", k, enc.encode(data)));
}

const byKeyThenValue = ([a, av]: [string, string], [b, bv]: [string, string]) => (a === b ? (av < bv ? -1 : av > bv ? 1 : 0) : a < b ? -1 : 1);

/** Twilio: URL, then each POST param (sorted by name) as name+value; HMAC-SHA1, base64. */
export function twilioSign(token: string, url: string, params: Array<[string, string]>): Promise<string> {
  let data = url;
  for (const [k, v] of [...params].sort(byKeyThenValue)) data += k + v;
  return hmacB64("SHA-1", token, data);
}

/** Plivo V3: scheme://host/path ? sorted query [ "." ] sorted POST params, then "." nonce; HMAC-SHA256. */
export function plivoV3Sign(token: string, url: string, params: Array<[string, string]>, nonce: string): Promise<string> {
  const u = new URL(url);
  const query = [...u.searchParams.entries()]
    .sort(byKeyThenValue)
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  const post = [...params]
    .sort(byKeyThenValue)
    .map(([k, v]) => k + v)
    .join("");
  const base = `${u.origin}${u.pathname}?${query}${query && post ? "." : ""}${post}`;
  return hmacB64("SHA-256", token, `${base}.${nonce}`);
}

/** Vobiz: the URL without its query, then the nonce ("." between them for V3). */
export function vobizSign(version: "V2" | "V3", token: string, url: string, nonce: string): Promise<string> {
  const u = new URL(url);
  const base = `${u.origin}${u.pathname}`;
  return hmacB64("SHA-256", token, version === "V3" ? `${base}.${nonce}` : `${base}${nonce}`);
}

/** Telnyx: Ed25519 over `timestamp|body` with the account's private key. */
export async function telnyxSign(privateKey: CryptoKey, timestamp: string, body: string): Promise<string> {
  return b64(await crypto.subtle.sign("Ed25519", privateKey, enc.encode(`${timestamp}|${body}`)));
}

/** Vonage signed callback: HS256 JWT with payload_hash = hex(SHA-256(body)). */
export async function vonageCallbackJwt(secret: string, claims: Record<string, unknown>, body: string): Promise<string> {
  const payloadHash = hex(await crypto.subtle.digest("SHA-256", enc.encode(body)));
  const head = b64url(enc.encode(JSON.stringify({ alg: "HS256", typ: "JWT" })));
  const payload = b64url(enc.encode(JSON.stringify({ ...claims, payload_hash: payloadHash })));
  const k = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return `${head}.${payload}.${b64url(await crypto.subtle.sign("HMAC", k, enc.encode(`${head}.${payload}`)))}`;
}

/** Verifies an RS256 JWT with an SPKI public key; returns its claims or null. */
export async function verifyRs256(jwt: string, publicKey: CryptoKey): Promise<Record<string, any> | null> {
  const parts = jwt.split(".");
  if (parts.length !== 3) return null;
  try {
    const header = JSON.parse(new TextDecoder().decode(unb64(parts[0])));
    if (header.alg !== "RS256") return null;
    const ok = await crypto.subtle.verify("RSASSA-PKCS1-v1_5", publicKey, unb64(parts[2]), enc.encode(`${parts[0]}.${parts[1]}`));
    return ok ? JSON.parse(new TextDecoder().decode(unb64(parts[1]))) : null;
  } catch {
    return null;
  }
}

/** A new RSA-2048 key pair of the kind Vonage applications use, with its private half as PKCS#8 DER. */
export async function rsaKeyPair(): Promise<{ pair: CryptoKeyPair; pkcs8: Uint8Array }> {
  const pair = (await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  return { pair, pkcs8: new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer) };
}

export function pem(label: string, der: ArrayBuffer | Uint8Array): string {
  const body = b64(der)
    .replace(/(.{64})/g, "$1\n")
    .trim();
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

export function basicCredentials(header: string | null): { user: string; password: string } | null {
  const m = /^Basic\s+(.+)$/i.exec(header ?? "");
  if (!m) return null;
  try {
    const text = atob(m[1]);
    const i = text.indexOf(":");
    return i < 0 ? null : { user: text.slice(0, i), password: text.slice(i + 1) };
  } catch {
    return null;
  }
}

/** A 20-digit nonce, as Plivo-family carriers send. */
export function randomNonce(): string {
  return [...crypto.getRandomValues(new Uint8Array(20))].map((b) => String(b % 10)).join("");
}
