// Plivo Voice (carriers.md §2): JSON originate, Plivo XML answer, V3 signatures
// (HMAC-SHA256 over URL + sorted query + sorted POST params + nonce).
import type { CallStatus, ConfigContext, OriginateRequest, OriginateResult, ProviderCalls, ProviderEnv, StatusUpdate } from "../types";
import { base64Encode, hmac, safeEqual } from "../../../lib/crypto";
import { basicAuth, baseUrl, carrierFetch, digits, formFields, intOrNull, isMachine, refused, str, xmlEscape } from "../../../calls/kit";

export const PLIVO_API = "https://api.plivo.com";

const creds = (ctx: ConfigContext) => ({ id: str(ctx.config.auth_id), token: str(ctx.config.auth_token) });
export const plivoAccountUrl = (ctx: ConfigContext, env: ProviderEnv) =>
  `${baseUrl(env, "plivo", PLIVO_API)}/v1/Account/${encodeURIComponent(creds(ctx).id)}`;
export const plivoHeaders = (ctx: ConfigContext) => ({
  Authorization: basicAuth(creds(ctx).id, creds(ctx).token),
  "Content-Type": "application/json",
  Accept: "application/json",
});

export function originateBody(req: OriginateRequest) {
  return {
    from: digits(req.from ?? ""),
    to: digits(req.to),
    answer_url: req.answerUrl,
    answer_method: "POST",
    ring_url: req.statusUrl,
    ring_method: "POST",
    hangup_url: req.statusUrl,
    hangup_method: "POST",
    ring_timeout: req.timeoutSeconds ?? 60,
  };
}

function sortedPairs(pairs: Array<[string, string]>): Array<[string, string]> {
  return [...pairs].sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
}

/** The V3 base string: `U?Q.P` for a POST with params (dots and `?` exactly as Plivo's SDK builds them). */
export function plivoV3Base(url: string, method: string, params: Array<[string, string]>): string {
  const u = new URL(url);
  const base = `${u.protocol}//${u.host}${u.pathname}`;
  const q = sortedPairs([...u.searchParams.entries()]).map(([k, v]) => `${k}=${v}`).join("&");
  if (method === "POST" && params.length > 0) {
    const p = sortedPairs(params).map(([k, v]) => k + v).join("");
    return `${base}?${q}${q !== "" ? "." : ""}${p}`;
  }
  return base + (q !== "" ? `?${q}` : "");
}

export async function plivoV3Signature(token: string, url: string, method: string, params: Array<[string, string]>, nonce: string): Promise<string> {
  return base64Encode(await hmac(token, `${plivoV3Base(url, method, params)}.${nonce}`, "SHA-256"));
}

/** Hang-up causes that decide the outcome on their own (carriers.md §2); others defer to CallStatus. */
function byCauseCode(code: number): CallStatus | null {
  if (code === 1000) return "canceled";
  if (code === 1010 || code === 1020) return "failed";
  if (code >= 2000 && code <= 2070) return "failed";
  if ([4000, 4010, 4020, 4030].includes(code)) return "completed";
  return null;
}

const STATUS: Record<string, CallStatus> = {
  ringing: "ringing",
  "in-progress": "in_progress",
  completed: "completed",
  busy: "busy",
  "no-answer": "no_answer",
  cancel: "canceled",
  timeout: "failed",
  failed: "failed",
};

/** Maps one Plivo-family callback (ring, answer, hangup) to a normalized update. Vobiz reuses it. */
export function mapPlivo(p: Record<string, string>): StatusUpdate | null {
  let status = STATUS[(p.CallStatus ?? "").toLowerCase()];
  if (!status) return null;
  const code = intOrNull(p.HangupCauseCode);
  if (status !== "ringing" && status !== "in_progress" && code !== null && code !== 0) status = byCauseCode(code) ?? status;
  if (/rejected/i.test(p.HangupCauseName ?? "") && status !== "completed") status = "declined";
  const answeredBy = p.AnsweredBy || p.MachineDetected || (p.Machine === "true" ? "machine" : "");
  if (status === "completed" && isMachine(answeredBy)) status = "voicemail";
  const update: StatusUpdate = { status };
  if (p.CallUUID) update.providerCallId = p.CallUUID;
  if (p.RequestUUID) update.requestId = p.RequestUUID;
  if (answeredBy) update.answeredBy = answeredBy;
  const duration = intOrNull(p.Duration);
  if (duration !== null && status !== "ringing" && status !== "in_progress") update.durationSeconds = duration;
  if (status === "failed" && (p.HangupCause || p.HangupCauseName)) update.error = `Call failed: ${p.HangupCauseName || p.HangupCause}`;
  return update;
}

/** Form first; the JSON variant some Plivo-compatible carriers post is accepted too. */
export function plivoFields(request: Request, rawBody: string): Record<string, string> {
  const type = request.headers.get("content-type") ?? "";
  if (type.includes("application/json")) {
    try {
      const obj = JSON.parse(rawBody) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, str(v)]));
    } catch {
      return {};
    }
  }
  return Object.fromEntries(formFields(rawBody));
}

export function plivoXml(text: string): { body: string; contentType: string } {
  const speak = text ? `<Speak>${xmlEscape(text)}</Speak>` : "";
  return { body: `<?xml version="1.0" encoding="UTF-8"?><Response>${speak}<Hangup/></Response>`, contentType: "application/xml" };
}

export const plivoCalls: ProviderCalls = {
  async originate(ctx, env, req): Promise<OriginateResult> {
    const res = await carrierFetch(`${plivoAccountUrl(ctx, env)}/Call/`, {
      method: "POST",
      headers: plivoHeaders(ctx),
      body: JSON.stringify(originateBody(req)),
    });
    // The request uuid stands in until the ring callback brings the CallUUID (correlated on RequestUUID).
    const raw = res.json?.request_uuid;
    const uuid = Array.isArray(raw) ? raw[0] : raw;
    if (res.status >= 200 && res.status < 300 && typeof uuid === "string") return { ok: true, providerCallId: uuid };
    return refused(res, res.json?.error ?? res.json?.message);
  },

  async hangup(ctx, env, id) {
    // Before the CallUUID is known only the request can be cancelled (…/Request/{uuid}/).
    for (const kind of ["Call", "Request"]) {
      const res = await carrierFetch(`${plivoAccountUrl(ctx, env)}/${kind}/${encodeURIComponent(id)}/`, { method: "DELETE", headers: plivoHeaders(ctx) });
      if (res.status >= 200 && res.status < 300) return;
      if (res.status !== 404) throw new Error(`Plivo hang-up failed (HTTP ${res.status}): ${res.json?.error ?? res.text}`);
    }
  },

  answerDocument: plivoXml,

  async verifyCallback(ctx, request, rawBody) {
    const nonce = request.headers.get("x-plivo-signature-v3-nonce");
    const header = request.headers.get("x-plivo-signature-v3") ?? request.headers.get("x-plivo-signature-ma-v3");
    if (!nonce || !header) return false;
    const isForm = (request.headers.get("content-type") ?? "").includes("application/x-www-form-urlencoded");
    const params = isForm ? formFields(rawBody) : [];
    const expected = await plivoV3Signature(creds(ctx).token, request.url, request.method, params, nonce);
    // The header may carry several comma-separated signatures; any one may match.
    return header.split(",").some((sig) => safeEqual(sig.trim(), expected));
  },

  async parseStatus(request, rawBody) {
    const u = mapPlivo(plivoFields(request, rawBody));
    return u ? [u] : [];
  },
};
