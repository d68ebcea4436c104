// Cloudonix: Bearer JSON originate through a voice-application URL, CXML answer
// document, no webhook signature (our per-run token is the only proof). Three status sources:
// session updates, the CDR, and voice-application requests.
import type { CallStatus, ConfigContext, OriginateResult, ProviderCalls, ProviderEnv, StatusUpdate } from "../types";
import {
  baseUrl,
  carrierFetch,
  connectStreamXml,
  credentialsResult,
  digits,
  intOrNull,
  jsonOrNull,
  originateFetch,
  placed,
  refused,
  speakThenHangupXml,
  str,
} from "../kit";
import { mapTwilio } from "../twilio-family";
import { cloudonixMedia } from "./media";

export const CLOUDONIX_API = "https://api.cloudonix.io";
/** Cloudonix documents no `<Say>` limit (unconfirmed): 3,000, the floor of the TTS engines such platforms use (Polly). */
export const CLOUDONIX_MAX_SAY = 3000;

export const cloudonixApi = (env: ProviderEnv) => baseUrl(env, "cloudonix", CLOUDONIX_API);
export const cloudonixHeaders = (ctx: ConfigContext) => ({
  Authorization: `Bearer ${str(ctx.config.bearer_token)}`,
  "Content-Type": "application/json",
  Accept: "application/json",
});
const domain = (ctx: ConfigContext) => encodeURIComponent(str(ctx.config.domain_id));

export function cloudonixErrorMessage(json: any): string | null {
  if (!json) return null;
  return str(json.message || json.error || json.detail) || null;
}

const CDR: Record<string, CallStatus> = {
  ANSWER: "completed",
  ANSWERED: "completed",
  BUSY: "busy",
  NOANSWER: "no_answer",
  "NO ANSWER": "no_answer",
  CANCEL: "canceled",
  FAILED: "failed",
  CONGESTION: "failed",
};

const SESSION: Record<string, CallStatus> = {
  ringing: "ringing",
  answer: "in_progress",
  answered: "in_progress",
  connected: "in_progress",
  "in-progress": "in_progress",
  busy: "busy",
  noanswer: "no_answer",
  "no-answer": "no_answer",
  cancel: "canceled",
  canceled: "canceled",
  failed: "failed",
  error: "failed",
  nocredit: "failed",
  congestion: "failed",
  completed: "completed",
};

/** Maps any of the three Cloudonix callback shapes; the call id is always the session token. */
export function mapCloudonix(body: any): StatusUpdate | null {
  if (!body || typeof body !== "object") return null;
  if (typeof body.disposition === "string") {
    const status = CDR[body.disposition.toUpperCase()];
    if (!status) return null;
    const u: StatusUpdate = { status, providerCallId: str(body.session?.token || body.token) || undefined };
    const billsec = intOrNull(body.billsec);
    if (billsec !== null) u.durationSeconds = billsec;
    if (status === "failed") u.error = `Call failed: ${body.disposition}`;
    return u;
  }
  if (typeof body.CallStatus === "string") {
    const u = mapTwilio({ ...body, CallSid: str(body.Session || body.CallSid) });
    return u;
  }
  if (typeof body.token === "string") {
    const answered = Number(body.callAnswerTime) > 0;
    let status = SESSION[str(body.status).toLowerCase()];
    if (!status) status = answered ? "in_progress" : "initiated";
    const u: StatusUpdate = { status, providerCallId: body.token };
    if (status === "completed") u.unansweredStatus = "no_answer";
    const start = Number(body.callAnswerTime);
    const end = Number(body.callEndTime);
    if (status === "completed" && start > 0 && end >= start) u.durationSeconds = Math.round((end - start) / 1000);
    return u;
  }
  return null;
}

export const cloudonixCalls: ProviderCalls = {
  media: cloudonixMedia,
  // GET the domain (/customers/self/domains/{domain}) with the bearer token: read-only, 401 when the token is wrong.
  async verifyCredentials(ctx, env) {
    const res = await carrierFetch(`${cloudonixApi(env)}/customers/self/domains/${domain(ctx)}`, { method: "GET", headers: cloudonixHeaders(ctx) }, env);
    return credentialsResult("Cloudonix", res, res.json?.message ?? res.json?.error);
  },
  async originate(ctx, env, req): Promise<OriginateResult> {
    const body = {
      destination: digits(req.to),
      "caller-id": digits(req.from ?? ""),
      url: req.answerUrl,
      callback: req.statusUrl,
      timeout: req.timeoutSeconds ?? 60,
    };
    const callIdOf = (json: any) => json?.token;
    const res = await originateFetch(
      `${cloudonixApi(env)}/calls/${domain(ctx)}/application`,
      {
        method: "POST",
        headers: cloudonixHeaders(ctx),
        body: JSON.stringify(body),
      },
      env,
      callIdOf,
    );
    return placed(res, callIdOf) ?? refused("Cloudonix", res, cloudonixErrorMessage(res.json), res.json?.code);
  },

  async hangup(ctx, env, token) {
    const res = await carrierFetch(
      `${cloudonixApi(env)}/customers/self/domains/${domain(ctx)}/sessions/${encodeURIComponent(token)}`,
      {
        method: "DELETE",
        headers: cloudonixHeaders(ctx),
      },
      env,
    );
    if ((res.status >= 200 && res.status < 300) || res.status === 404) return;
    throw new Error(`Cloudonix hang-up failed (HTTP ${res.status}): ${cloudonixErrorMessage(res.json) ?? res.text}`);
  },

  // No signature: our per-run token is the only proof.

  signsCallbackBody: false,

  maxSpeakChars: CLOUDONIX_MAX_SAY,

  answerDocument(text) {
    return { body: speakThenHangupXml("Say", text, CLOUDONIX_MAX_SAY), contentType: "application/xml" };
  },

  mediaDocument: (streamUrl, resumeUrl) => ({ body: connectStreamXml(streamUrl, resumeUrl), contentType: "application/xml" }),

  // Cloudonix signs nothing: the per-run token checked by the callback route is the proof.
  async verifyCallback() {
    return true;
  },

  async parseStatus(request, rawBody) {
    let body = jsonOrNull(rawBody);
    if (!body && request.method === "GET") body = Object.fromEntries(new URL(request.url).searchParams);
    if (!body && rawBody) body = Object.fromEntries(new URLSearchParams(rawBody));
    const u = mapCloudonix(body);
    return u ? [u] : [];
  },
};
