// Exotel: form-encoded connect.json with the stream URL in the request itself
// (no answer document), no webhook signature (our per-run token is the proof).
import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import type { CallStatus, ConfigContext, OriginateResult, ProviderCalls, ProviderEnv, StatusUpdate } from "../types";
import { basicAuth, carrierFetch, credentialsResult, intOrNull, isMachine, jsonOrNull, originateFetch, placed, refused, str } from "../kit";
import { exotelMedia } from "./media";

export const EXOTEL_API = "https://api.in.exotel.com";

/** A deployment override (the simulator) wins, then the configuration's region, then Mumbai. */
export const exotelApi = (ctx: ConfigContext, env: ProviderEnv) => (env.baseUrls.exotel || str(ctx.config.api_base_url) || EXOTEL_API).replace(/\/+$/, "");

/** Call safety cap: Exotel's maximum is 14400 s; ours follows the campaign default max call length. */
export const EXOTEL_TIME_LIMIT_SECONDS = 3600;

/**
 * The ExoPhone as Exotel lists it: an Indian number in national format with its trunk prefix (`+918047112345` ->
 * `08047112345`; toll-free `1800…` has none), as libphonenumber formats it. Other numbers stay E.164 (unconfirmed:
 * Exotel documents only Indian ExoPhones).
 */
export function exophone(e164: string): string {
  const n = parsePhoneNumberFromString(e164);
  return n?.country === "IN" && n.isValid() ? n.formatNational().replace(/\D/g, "") : e164;
}

/** Reads a key case-insensitively (the classic API capitalizes, the Voice-AI guide does not). */
function pick(obj: any, key: string): any {
  if (!obj || typeof obj !== "object") return undefined;
  const k = Object.keys(obj).find((x) => x.toLowerCase() === key.toLowerCase());
  return k === undefined ? undefined : obj[k];
}

/** The call's id in the answer to connect.json: Call.Sid. */
const callSid = (json: any) => pick(pick(json, "Call"), "Sid");

const STATUS: Record<string, CallStatus> = {
  completed: "completed",
  busy: "busy",
  "no-answer": "no_answer",
  failed: "failed",
  canceled: "canceled",
  cancelled: "canceled",
};

/** Callback fields from a form body (`Legs[0][AnsweredBy]` style) or a JSON body. */
export function exotelFields(rawBody: string): { fields: Record<string, string>; legsAnsweredBy: string[] } {
  const json = jsonOrNull(rawBody);
  if (json && typeof json === "object") {
    const legs = Array.isArray(json.Legs) ? json.Legs : [];
    return {
      fields: Object.fromEntries(Object.entries(json).map(([k, v]) => [k, str(v)])),
      legsAnsweredBy: legs.map((l: any) => str(pick(l, "AnsweredBy"))).filter(Boolean),
    };
  }
  const params = new URLSearchParams(rawBody);
  const legsAnsweredBy: string[] = [];
  for (const [k, v] of params) if (/^Legs\[\d+\]\[AnsweredBy\]$/i.test(k) && v) legsAnsweredBy.push(v);
  return { fields: Object.fromEntries(params), legsAnsweredBy };
}

export function mapExotel(fields: Record<string, string>, legsAnsweredBy: string[]): StatusUpdate | null {
  const sid = str(pick(fields, "CallSid")) || undefined;
  const event = str(pick(fields, "EventType")).toLowerCase();
  const raw = str(pick(fields, "Status")).toLowerCase();
  if (event === "answered") return { status: "in_progress", providerCallId: sid };
  if (event === "ringing") return { status: "ringing", providerCallId: sid };
  let status = STATUS[raw];
  if (!status) return null;
  const machine = legsAnsweredBy.find(isMachine);
  if (status === "completed" && machine) status = "voicemail";
  const u: StatusUpdate = { status, providerCallId: sid };
  if (machine) u.answeredBy = machine;
  const duration = intOrNull(pick(fields, "ConversationDuration"));
  if (duration !== null) u.durationSeconds = duration;
  return u;
}

export const exotelCalls: ProviderCalls = {
  media: exotelMedia,
  // Account details (GET /v1/Accounts/{sid}): read-only, 401 on a wrong API key or token.
  async verifyCredentials(ctx, env) {
    const url = `${exotelApi(ctx, env)}/v1/Accounts/${encodeURIComponent(str(ctx.config.account_sid))}.json`;
    const res = await carrierFetch(
      url,
      { method: "GET", headers: { Authorization: basicAuth(str(ctx.config.api_key), str(ctx.config.api_token)), Accept: "application/json" } },
      env,
    );
    return credentialsResult("Exotel", res, res.json?.RestException?.Message ?? res.json?.message);
  },
  async originate(ctx, env, req): Promise<OriginateResult> {
    const form = new URLSearchParams();
    form.append("from", req.to); // Exotel dials `from` first: that is the party we call
    form.append("callerid", exophone(req.from ?? ""));
    form.append("streamurl", req.streamUrl ?? "");
    form.append("streamtype", "bidirectional");
    form.append("statuscallback", req.statusUrl);
    for (const ev of ["terminal", "answered"]) form.append("statuscallbackevents[]", ev);
    form.append("timelimit", String(EXOTEL_TIME_LIMIT_SECONDS));
    form.append("timeout", String(req.timeoutSeconds ?? 60));
    form.append("customfield", `run:${req.runId}`);
    const res = await originateFetch(
      `${exotelApi(ctx, env)}/v1/Accounts/${encodeURIComponent(str(ctx.config.account_sid))}/Calls/connect.json`,
      {
        method: "POST",
        headers: {
          Authorization: basicAuth(str(ctx.config.api_key), str(ctx.config.api_token)),
          "Content-Type": "application/x-www-form-urlencoded",
          Accept: "application/json",
        },
        body: form.toString(),
      },
      env,
      callSid,
    );
    const call = placed(res, callSid);
    if (call) return call;
    const ex = pick(res.json, "RestException");
    return refused("Exotel", res, pick(ex, "Message") ?? pick(res.json, "message"), pick(ex, "Code"));
  },

  // Exotel documents no hang-up for a live call; the call ends when our media socket closes.
  async hangup() {},

  // No speech verb: greeting and audio go over the media socket.
  // No signature: our per-run token is the only proof.
  signsCallbackBody: false,

  maxSpeakChars: null,

  // No answer document: the stream URL travels in the originate request.
  answerDocument() {
    return { body: "{}", contentType: "application/json" };
  },

  async verifyCallback() {
    return true;
  },

  async parseStatus(_request, rawBody) {
    const { fields, legsAnsweredBy } = exotelFields(rawBody);
    const u = mapExotel(fields, legsAnsweredBy);
    return u ? [u] : [];
  },
};
