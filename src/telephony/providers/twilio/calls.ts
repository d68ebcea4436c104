// Twilio Programmable Voice: form-encoded REST, TwiML answer document,
// X-Twilio-Signature = base64(HMAC-SHA1(AuthToken, URL + sorted params)).
import type { ConfigContext, OriginateRequest, OriginateResult, ProviderCalls, ProviderEnv } from "../types";
import { base64Encode, hmac, safeEqual } from "../../../lib/crypto";
import { baseUrl, basicAuth, carrierFetch, connectStreamXml, credentialsResult, formFields, originateFetch, refused, speakThenHangupXml, str } from "../kit";
import { mapTwilio } from "../twilio-family";
import { twilioMedia } from "./media";

export const TWILIO_API = "https://api.twilio.com";
/** `<Say>` with Twilio's default (basic) voice takes 4,096 characters. */
export const TWILIO_MAX_SAY = 4096;

const creds = (ctx: ConfigContext) => ({ sid: str(ctx.config.account_sid), token: str(ctx.config.auth_token) });
const callsUrl = (ctx: ConfigContext, env: ProviderEnv) =>
  `${baseUrl(env, "twilio", TWILIO_API)}/2010-04-01/Accounts/${encodeURIComponent(creds(ctx).sid)}/Calls`;

/** The originate form, in the order Twilio documents it (StatusCallbackEvent repeated once per value). */
export function originateForm(ctx: ConfigContext, req: OriginateRequest): URLSearchParams {
  const form = new URLSearchParams();
  form.append("To", req.to);
  form.append("From", req.from ?? "");
  form.append("Url", req.answerUrl);
  form.append("Method", "POST");
  form.append("StatusCallback", req.statusUrl);
  form.append("StatusCallbackMethod", "POST");
  for (const ev of ["initiated", "ringing", "answered", "completed"]) form.append("StatusCallbackEvent", ev);
  form.append("Timeout", String(req.timeoutSeconds ?? 60));
  if (ctx.config.amd_enabled === true) form.append("MachineDetection", "Enable");
  return form;
}

/** Twilio's signature: the exact public URL, then every POST param sorted by name (repeated keys by value). */
export async function twilioSignature(authToken: string, url: string, params: Array<[string, string]>): Promise<string> {
  const sorted = [...params].sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  const data = url + sorted.map(([k, v]) => k + v).join("");
  return base64Encode(await hmac(authToken, data, "SHA-1"));
}

/** The URL variants validators accept: as given, and with/without the default port (the port variants are not confirmed by Twilio's documentation). */
function urlVariants(url: string): string[] {
  const u = new URL(url);
  const out = [url];
  const defaultPort = u.protocol === "https:" ? "443" : "80";
  if (u.port === "") {
    const withPort = `${u.protocol}//${u.username ? `${u.username}:${u.password}@` : ""}${u.hostname}:${defaultPort}${u.pathname}${u.search}`;
    out.push(withPort);
  } else if (u.port === defaultPort) {
    out.push(url.replace(`:${defaultPort}`, ""));
  }
  return out;
}

/** Creates the call (POST .../Calls.json) from its form: 201 with the call's sid, else the carrier's refusal. */
export async function createCall(ctx: ConfigContext, env: ProviderEnv, form: URLSearchParams): Promise<OriginateResult> {
  const { sid, token } = creds(ctx);
  const res = await originateFetch(
    `${callsUrl(ctx, env)}.json`,
    {
      method: "POST",
      headers: { Authorization: basicAuth(sid, token), "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: form.toString(),
    },
    env,
    (json) => json?.sid,
  );
  if (res.status === 201 || (res.status >= 200 && res.status < 300 && res.json?.sid)) {
    if (typeof res.json?.sid === "string") return { ok: true, providerCallId: res.json.sid };
  }
  return refused("Twilio", res, res.json?.message, res.json?.code);
}

export const twilioCalls: ProviderCalls = {
  media: twilioMedia,
  // Fetch the account (GET /2010-04-01/Accounts/{sid}.json): read-only, 401 code 20003 on bad credentials.
  async verifyCredentials(ctx, env) {
    const { sid, token } = creds(ctx);
    const url = `${baseUrl(env, "twilio", TWILIO_API)}/2010-04-01/Accounts/${encodeURIComponent(sid)}.json`;
    const res = await carrierFetch(url, { method: "GET", headers: { Authorization: basicAuth(sid, token), Accept: "application/json" } }, env);
    return credentialsResult("Twilio", res, res.json?.message);
  },
  originate: (ctx, env, req) => createCall(ctx, env, originateForm(ctx, req)),

  async hangup(ctx, env, sid) {
    const { sid: account, token } = creds(ctx);
    const url = `${callsUrl(ctx, env)}/${encodeURIComponent(sid)}.json`;
    const headers = { Authorization: basicAuth(account, token), "Content-Type": "application/x-www-form-urlencoded" };
    // Canceled ends a queued or ringing call; an answered call needs completed. Try the former first.
    for (const status of ["canceled", "completed"]) {
      const res = await carrierFetch(url, { method: "POST", headers, body: new URLSearchParams({ Status: status }).toString() }, env);
      if (res.status === 404) return; // already gone
      if (res.status >= 200 && res.status < 300) {
        const now = res.json?.status;
        if (!now || ["canceled", "completed", "busy", "failed", "no-answer"].includes(now)) return;
      } else if (res.status !== 400) {
        throw new Error(`Twilio hang-up failed (HTTP ${res.status}): ${res.json?.message ?? res.text}`);
      }
    }
  },

  // The signature covers the URL and every POST parameter.

  signsCallbackBody: true,

  maxSpeakChars: TWILIO_MAX_SAY,

  answerDocument(text) {
    return { body: speakThenHangupXml("Say", text, TWILIO_MAX_SAY), contentType: "text/xml" };
  },

  mediaDocument: (streamUrl, resumeUrl) => ({ body: connectStreamXml(streamUrl, resumeUrl), contentType: "text/xml" }),

  async verifyCallback(ctx, request, rawBody) {
    const presented = request.headers.get("x-twilio-signature");
    if (!presented) return false;
    const token = creds(ctx).token;
    const isForm = (request.headers.get("content-type") ?? "").includes("application/x-www-form-urlencoded");
    const params = request.method === "POST" && isForm ? formFields(rawBody) : [];
    for (const url of urlVariants(request.url)) {
      if (safeEqual(await twilioSignature(token, url, params), presented)) return true;
    }
    return false;
  },

  async parseStatus(_request, rawBody) {
    const p = Object.fromEntries(formFields(rawBody));
    const u = mapTwilio(p);
    return u ? [u] : [];
  },
};
