// Vobiz: Plivo-compatible calls (../plivo-family) with X-Auth headers; signatures cover
// only the query-less URL and a nonce, so the body is trusted only through the calls module's id cross-check.
import type { ConfigContext, ProviderEnv } from "../types";
import { base64Encode, hmac, safeEqual } from "../../../lib/crypto";
import { baseUrl } from "../kit";
import { clock } from "../../../lib/clock";
import { FAMILY_NONCE_RETENTION_MS, familyCalls, familyCreds, type PlivoFamilyCarrier } from "../plivo-family";

export const VOBIZ_API = "https://api.vobiz.ai";

export const vobizCarrier: PlivoFamilyCarrier = {
  name: "vobiz",
  signsCallbackBody: false,
  label: "Vobiz",
  accountUrl: (ctx: ConfigContext, env: ProviderEnv) => `${baseUrl(env, "vobiz", VOBIZ_API)}/api/v1/Account/${encodeURIComponent(familyCreds(ctx).id)}`,
  headers: (ctx: ConfigContext) => ({
    "X-Auth-ID": familyCreds(ctx).id,
    "X-Auth-Token": familyCreds(ctx).token,
    "Content-Type": "application/json",
    Accept: "application/json",
  }),
};

/** The callback URL with every query parameter removed, as Vobiz signs it. */
export function vobizBaseUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

export async function vobizSignature(version: "V2" | "V3", token: string, url: string, nonce: string): Promise<string> {
  const base = vobizBaseUrl(url);
  return base64Encode(await hmac(token, version === "V3" ? `${base}.${nonce}` : base + nonce, "SHA-256"));
}

/** The version a callback is verified with: V3 when its headers are present, else V2 (as vobizCalls checks). */
function signedWith(request: Request): { version: "V3" | "V2"; sig: string; nonce: string } | null {
  for (const version of ["V3", "V2"] as const) {
    const sig = request.headers.get(`x-vobiz-signature-${version.toLowerCase()}`);
    const nonce = request.headers.get(`x-vobiz-signature-${version.toLowerCase()}-nonce`);
    if (sig && nonce) return { version, sig, nonce };
  }
  return null;
}

export const vobizCalls = familyCalls(
  vobizCarrier,
  async (ctx, request) => {
    // Prefer V3, fall back to V2; the MA variants are signed with a parent account's token we don't hold.
    const signed = signedWith(request);
    if (!signed) return false;
    const expected = await vobizSignature(signed.version, familyCreds(ctx).token, request.url, signed.nonce);
    return signed.sig.split(",").some((s) => safeEqual(s.trim(), expected));
  },
  (_ctx, request) => {
    // Neither body nor query is signed: the nonce is what stops a captured signature from carrying another
    // body. One scheme for V2 and V3, so a V3 request replayed with only its V2 headers is a repeat too.
    const signed = signedWith(request);
    return signed ? { scheme: "vobiz", nonce: signed.nonce, expiresAtMs: clock.now() + FAMILY_NONCE_RETENTION_MS } : null;
  },
);
