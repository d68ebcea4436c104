// Plivo Voice: JSON originate, Plivo XML answer, V3 signatures
// (HMAC-SHA256 over URL + sorted query + sorted POST params + nonce). Originate, hang-up, mapping and
// the answer document are shared with Vobiz (../plivo-family); Basic auth and V3 are Plivo's own.
import type { ConfigContext, ProviderEnv } from "../types";
import { base64Encode, hmac, safeEqual } from "../../../lib/crypto";
import { basicAuth, baseUrl, formFields } from "../kit";
import { clock } from "../../../lib/clock";
import { FAMILY_NONCE_RETENTION_MS, familyCalls, familyCreds, type PlivoFamilyCarrier } from "../plivo-family";

export const PLIVO_API = "https://api.plivo.com";

export const plivoCarrier: PlivoFamilyCarrier = {
  name: "plivo",
  signsCallbackBody: true,
  label: "Plivo",
  accountUrl: (ctx: ConfigContext, env: ProviderEnv) => `${baseUrl(env, "plivo", PLIVO_API)}/v1/Account/${encodeURIComponent(familyCreds(ctx).id)}`,
  headers: (ctx: ConfigContext) => ({
    Authorization: basicAuth(familyCreds(ctx).id, familyCreds(ctx).token),
    "Content-Type": "application/json",
    Accept: "application/json",
  }),
};

function sortedPairs(pairs: Array<[string, string]>): Array<[string, string]> {
  return [...pairs].sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
}

/** The V3 base string: `U?Q.P` for a POST with params (dots and `?` exactly as Plivo's SDK builds them). */
export function plivoV3Base(url: string, method: string, params: Array<[string, string]>): string {
  const u = new URL(url);
  const base = `${u.protocol}//${u.host}${u.pathname}`;
  const q = sortedPairs([...u.searchParams.entries()])
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  if (method === "POST" && params.length > 0) {
    const p = sortedPairs(params)
      .map(([k, v]) => k + v)
      .join("");
    return `${base}?${q}${q !== "" ? "." : ""}${p}`;
  }
  return base + (q !== "" ? `?${q}` : "");
}

export async function plivoV3Signature(token: string, url: string, method: string, params: Array<[string, string]>, nonce: string): Promise<string> {
  return base64Encode(await hmac(token, `${plivoV3Base(url, method, params)}.${nonce}`, "SHA-256"));
}

export const plivoCalls = familyCalls(plivoCarrier, verifyPlivo, (_ctx, request) => {
  // The main-account signature (-Ma-V3) shares the nonce header, so one scheme covers both.
  const nonce = request.headers.get("x-plivo-signature-v3-nonce");
  return nonce ? { scheme: "plivo-v3", nonce, expiresAtMs: clock.now() + FAMILY_NONCE_RETENTION_MS } : null;
});

async function verifyPlivo(ctx: Parameters<typeof familyCreds>[0], request: Request, rawBody: string): Promise<boolean> {
  const nonce = request.headers.get("x-plivo-signature-v3-nonce");
  const header = request.headers.get("x-plivo-signature-v3") ?? request.headers.get("x-plivo-signature-ma-v3");
  if (!nonce || !header) return false;
  const isForm = (request.headers.get("content-type") ?? "").includes("application/x-www-form-urlencoded");
  const params = isForm ? formFields(rawBody) : [];
  const expected = await plivoV3Signature(familyCreds(ctx).token, request.url, request.method, params, nonce);
  // The header may carry several comma-separated signatures; any one may match.
  return header.split(",").some((sig) => safeEqual(sig.trim(), expected));
}
