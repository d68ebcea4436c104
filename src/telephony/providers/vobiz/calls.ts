// Vobiz (carriers.md §3): Plivo-compatible calls with X-Auth headers; signatures cover only the
// query-less URL and a nonce, so the body is trusted only through the calls module's id cross-check.
import type { ConfigContext, OriginateResult, ProviderCalls, ProviderEnv } from "../types";
import { base64Encode, hmac, safeEqual } from "../../../lib/crypto";
import { baseUrl, carrierFetch, refused, str } from "../../../calls/kit";
import { mapPlivo, originateBody, plivoFields, plivoXml } from "../plivo/calls";

export const VOBIZ_API = "https://api.vobiz.ai";

const creds = (ctx: ConfigContext) => ({ id: str(ctx.config.auth_id), token: str(ctx.config.auth_token) });
export const vobizAccountUrl = (ctx: ConfigContext, env: ProviderEnv) =>
  `${baseUrl(env, "vobiz", VOBIZ_API)}/api/v1/Account/${encodeURIComponent(creds(ctx).id)}`;
export const vobizHeaders = (ctx: ConfigContext) => ({
  "X-Auth-ID": creds(ctx).id,
  "X-Auth-Token": creds(ctx).token,
  "Content-Type": "application/json",
  Accept: "application/json",
});

/** The callback URL with every query parameter removed, as Vobiz signs it. */
export function vobizBaseUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

export async function vobizSignature(version: "V2" | "V3", token: string, url: string, nonce: string): Promise<string> {
  const base = vobizBaseUrl(url);
  return base64Encode(await hmac(token, version === "V3" ? `${base}.${nonce}` : base + nonce, "SHA-256"));
}

export const vobizCalls: ProviderCalls = {
  async originate(ctx, env, req): Promise<OriginateResult> {
    const res = await carrierFetch(`${vobizAccountUrl(ctx, env)}/Call/`, {
      method: "POST",
      headers: vobizHeaders(ctx),
      body: JSON.stringify(originateBody(req)),
    });
    const raw = res.json?.request_uuid;
    const uuid = Array.isArray(raw) ? raw[0] : raw;
    if (res.status >= 200 && res.status < 300 && typeof uuid === "string") return { ok: true, providerCallId: uuid };
    return refused(res, res.json?.error ?? res.json?.message);
  },

  async hangup(ctx, env, id) {
    // As Plivo: before the CallUUID is known only the request can be cancelled (…/Request/{uuid}/) (unconfirmed for Vobiz).
    for (const kind of ["Call", "Request"]) {
      const res = await carrierFetch(`${vobizAccountUrl(ctx, env)}/${kind}/${encodeURIComponent(id)}/`, { method: "DELETE", headers: vobizHeaders(ctx) });
      if (res.status >= 200 && res.status < 300) return;
      if (res.status !== 404) throw new Error(`Vobiz hang-up failed (HTTP ${res.status}): ${res.json?.error ?? res.text}`);
    }
  },

  answerDocument: plivoXml,

  async verifyCallback(ctx, request) {
    const token = creds(ctx).token;
    // Prefer V3, fall back to V2; the MA variants are signed with a parent account's token we don't hold.
    for (const version of ["V3", "V2"] as const) {
      const sig = request.headers.get(`x-vobiz-signature-${version.toLowerCase()}`);
      const nonce = request.headers.get(`x-vobiz-signature-${version.toLowerCase()}-nonce`);
      if (!sig || !nonce) continue;
      const expected = await vobizSignature(version, token, request.url, nonce);
      return sig.split(",").some((s) => safeEqual(s.trim(), expected));
    }
    return false;
  },

  async parseStatus(request, rawBody) {
    const u = mapPlivo(plivoFields(request, rawBody));
    return u ? [u] : [];
  },
};
