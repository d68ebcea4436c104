// Worker-served upload URLs: `PUT /api/v1/uploads/{key}` carrying an expiring
// HMAC over the key, the declared size and the content type. Pure signing and checking; the route streams the body.
import { base64UrlEncode, hmac, safeEqual } from "../lib/crypto";

export type UploadGrant = { key: string; size: number; type: string; expires: number /* unix seconds */ };

export type GrantCheck = { ok: true; grant: UploadGrant } | { ok: false; status: 403; detail: string };

const SCOPE = "edgedial-upload-v1";

/** The exact text signed: versioned, newline-separated, so no field can bleed into another. */
export function grantText(g: UploadGrant): string {
  return [SCOPE, g.key, String(g.size), g.type, String(g.expires)].join("\n");
}

export async function signGrant(secret: string, g: UploadGrant): Promise<string> {
  if (!secret) throw new Error("UPLOAD_SIGNING_SECRET is not set");
  return base64UrlEncode(await hmac(secret, grantText(g)));
}

/** The upload URL under `origin` (the public base URL or the request's origin). */
export async function localUploadUrl(origin: string, secret: string, g: UploadGrant): Promise<string> {
  const sig = await signGrant(secret, g);
  const q = new URLSearchParams({ size: String(g.size), type: g.type, expires: String(g.expires), sig });
  return `${origin.replace(/\/+$/, "")}/api/v1/uploads/${g.key}?${q}`;
}

const INVALID: GrantCheck = { ok: false, status: 403, detail: "Invalid upload signature" };

/** Checks a presented URL's signature first (a tampered expiry is "invalid", not "expired"), then its expiry. */
export async function checkGrant(secret: string, key: string, params: URLSearchParams, nowMs: number): Promise<GrantCheck> {
  const size = params.get("size");
  const type = params.get("type");
  const expires = params.get("expires");
  const sig = params.get("sig");
  if (!secret || !size || !type || !expires || !sig || !/^\d{1,12}$/.test(size) || !/^\d{1,12}$/.test(expires)) return INVALID;
  const grant: UploadGrant = { key, size: Number(size), type, expires: Number(expires) };
  if (!safeEqual(await signGrant(secret, grant), sig)) return INVALID;
  if (nowMs >= grant.expires * 1000) return { ok: false, status: 403, detail: "Upload URL has expired" };
  return { ok: true, grant };
}

/** The media type of a Content-Type header, lowercased, without parameters (`text/csv; charset=utf-8` -> `text/csv`). */
export function mediaType(header: string | null | undefined): string {
  return (header ?? "").split(";")[0].trim().toLowerCase();
}
