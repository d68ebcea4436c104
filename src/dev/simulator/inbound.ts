// Calls that come in, as the carriers place them: the account's phone numbers (Twilio's IncomingPhoneNumbers, found
// by PhoneNumber and updated with VoiceUrl/StatusCallback as its REST API documents), and a caller dialing one of
// them: the carrier's signed voice request to the URL the number routes to, with the call registered so the rest of
// the simulator (hang-up through the API, the media stream, the status callbacks) treats it as any other call.
import { placeTelnyxInbound } from "./carriers/telnyx-inbound";
import { placeVonageInbound } from "./carriers/vonage-inbound";
import { webhook as telnyxWebhook } from "./carriers/telnyx";
import { SANDBOX_ACCOUNT_ID } from "./sandbox";
import { basicCredentials, plivoV3Sign, randomNonce, twilioSign, vobizSign } from "./sign";
import { inboundCall, json, randomHex, type Account, type Callback, type SimState } from "./types";

export type SimNumber = { sid: string; phone_number: string; voice_url: string; voice_method: string; status_callback: string };

const numbersOf = (account: Account): SimNumber[] => ((account.secret.numbers as SimNumber[] | undefined) ??= []);

/** A number the account owns (the control API's `numbers` action). */
export function addNumber(account: Account, phoneNumber: string): SimNumber {
  const n: SimNumber = { sid: `PN${randomHex(16)}`, phone_number: phoneNumber, voice_url: "", voice_method: "POST", status_callback: "" };
  numbersOf(account).push(n);
  return n;
}

export const listNumbers = numbersOf;

const twilioErr = (status: number, code: number, message: string) =>
  json(status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });

/** Twilio's IncomingPhoneNumbers list (filtered by PhoneNumber) and update; null for any other path. */
export async function twilioNumbersApi(state: SimState, req: Request, path: string, body: string): Promise<Response | null> {
  const m = /^\/2010-04-01\/Accounts\/([^/]+)\/IncomingPhoneNumbers(?:\/([^/]+))?\.json$/.exec(path);
  if (!m) return null;
  const account = [...state.accounts.values()].find((a) => a.provider === "twilio" && a.credentials.account_sid === m[1]);
  const c = basicCredentials(req.headers.get("authorization"));
  if (!account || !c || c.user !== m[1] || c.password !== account.credentials.auth_token) return twilioErr(401, 20003, "Authenticate");
  const url = new URL(req.url);
  state.record(account.id, {
    method: req.method,
    path,
    query: Object.fromEntries([...url.searchParams.keys()].map((k) => [k, url.searchParams.getAll(k)])),
    headers: Object.fromEntries(req.headers),
    body,
    at: Date.now(),
  });
  const view = (n: SimNumber) => ({
    sid: n.sid,
    account_sid: m[1],
    phone_number: n.phone_number,
    voice_url: n.voice_url,
    voice_method: n.voice_method,
    status_callback: n.status_callback,
  });
  if (!m[2]) {
    if (req.method !== "GET") return twilioErr(405, 20004, "Method not allowed");
    const want = url.searchParams.get("PhoneNumber");
    // The sandbox's account owns every number it is asked about: any number may be a sandbox configuration's.
    if (want && account.id === SANDBOX_ACCOUNT_ID && !numbersOf(account).some((n) => n.phone_number === want)) addNumber(account, want);
    return json(200, {
      incoming_phone_numbers: numbersOf(account)
        .filter((n) => !want || n.phone_number === want)
        .map(view),
      page: 0,
      page_size: 50,
    });
  }
  const n = numbersOf(account).find((x) => x.sid === m[2]);
  if (!n) return twilioErr(404, 20404, `The requested resource ${path} was not found`);
  if (req.method !== "POST") return twilioErr(405, 20004, "Method not allowed");
  if (!(req.headers.get("content-type") ?? "").includes("application/x-www-form-urlencoded")) return twilioErr(400, 21601, "Request body must be form-encoded");
  const form = new URLSearchParams(body);
  const voiceUrl = form.get("VoiceUrl");
  if (voiceUrl !== null && voiceUrl !== "" && !/^https?:\/\//.test(voiceUrl)) return twilioErr(400, 21502, "VoiceUrl is not valid");
  if (voiceUrl !== null) n.voice_url = voiceUrl;
  if (form.get("VoiceMethod")) n.voice_method = form.get("VoiceMethod")!;
  if (form.get("StatusCallback") !== null) n.status_callback = form.get("StatusCallback")!;
  return json(200, view(n));
}

export type InboundOptions = {
  to: string;
  from: string;
  /** Deliver to this URL instead of the number's (a forged route). */
  url?: string;
  /** Signed with a time outside the carrier's window (carriers that sign a timestamp). */
  stale?: boolean;
};

/** A caller dials `to`: the call registered, and the carrier's signed voice request for it. */
export async function placeInbound(state: SimState, account: Account, o: InboundOptions): Promise<Callback> {
  if (account.provider === "plivo" || account.provider === "vobiz") return placeFamilyInbound(state, account, o);
  if (account.provider === "vonage") return placeVonageInbound(state, account, o);
  if (account.provider === "cloudonix") return placeCloudonixInbound(state, account, o);
  if (account.provider === "exotel") return placeExotelInbound(state, account, o);
  if (account.provider === "telnyx")
    return placeTelnyxInbound(account, state, o, (a, c, type, payload) => telnyxWebhook(a, c, type, payload, { stale: o.stale }));
  if (account.provider !== "twilio") throw new Error(`the simulator places no inbound ${account.provider} call yet`);
  const n = numbersOf(account).find((x) => x.phone_number === o.to);
  const url = o.url ?? n?.voice_url;
  if (!url) throw new Error(`${o.to} routes nowhere`);
  const sid = `CA${randomHex(16)}`;
  inboundCall(state, {
    id: sid,
    provider: "twilio",
    accountId: account.id,
    to: o.to,
    from: o.from,
    answerUrl: url,
    statusUrl: n?.status_callback || undefined,
    state: "answered",
    extra: { events: [] },
  });
  const fields = {
    CallSid: sid,
    AccountSid: account.credentials.account_sid,
    From: o.from,
    To: o.to,
    Called: o.to,
    Caller: o.from,
    CallStatus: "ringing",
    Direction: "inbound",
    ApiVersion: "2010-04-01",
  };
  const body = new URLSearchParams(fields).toString();
  return {
    kind: "answer",
    method: "POST",
    url,
    body,
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      "X-Twilio-Signature": await twilioSign(account.credentials.auth_token, url, Object.entries(fields)),
    },
  };
}

/**
 * Plivo and Vobiz: the number's application's answer_url gets a form post (CallUUID, From and To without the +,
 * Direction=inbound, CallStatus=ringing), signed as each signs (Plivo V3 over URL and params; Vobiz over the URL).
 */
async function placeFamilyInbound(state: SimState, account: Account, o: InboundOptions): Promise<Callback> {
  const url = o.url ?? account.applications[0]?.url;
  if (!url) throw new Error(`${o.to} routes nowhere`);
  const uuid = crypto.randomUUID();
  const digits = (n: string) => n.replace(/^\+/, "");
  const call = inboundCall(state, {
    id: uuid,
    provider: account.provider,
    accountId: account.id,
    to: digits(o.to),
    from: digits(o.from),
    answerUrl: url,
    statusUrl: url,
    urls: { answer: url, hangup: url },
    state: "answered",
    extra: { callUuid: uuid },
  });
  const fields: Record<string, string> = { CallUUID: uuid, From: call.from, To: call.to, Direction: "inbound", CallStatus: "ringing", Event: "StartApp" };
  const params = Object.entries(fields);
  const nonce = randomNonce();
  const token = account.credentials.auth_token;
  const signed: Record<string, string> =
    account.provider === "plivo"
      ? { "X-Plivo-Signature-V3": await plivoV3Sign(token, url, params, nonce), "X-Plivo-Signature-V3-Nonce": nonce }
      : { "X-Vobiz-Signature-V3": await vobizSign("V3", token, url, nonce), "X-Vobiz-Signature-V3-Nonce": nonce };
  return {
    kind: "answer",
    method: "POST",
    url,
    body: new URLSearchParams(params).toString(),
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...signed },
  };
}

/**
 * Cloudonix: the domain's voice application gets the CXML request of the incoming call (JSON, TwiML-like fields plus
 * Session, the session token). Unsigned, as Cloudonix documents no signature.
 */
async function placeCloudonixInbound(state: SimState, account: Account, o: InboundOptions): Promise<Callback> {
  const url = o.url ?? account.applications[0]?.url;
  if (!url) throw new Error(`${o.to} routes nowhere`);
  const token = randomHex(16);
  const call = inboundCall(state, {
    id: token,
    provider: "cloudonix",
    accountId: account.id,
    to: o.to.replace(/^\+/, ""),
    from: o.from.replace(/^\+/, ""),
    answerUrl: url,
    statusUrl: url,
    state: "answered",
  });
  const body = JSON.stringify({
    CallSid: token,
    Session: token,
    From: call.from,
    To: call.to,
    Direction: "inbound",
    CallStatus: "ringing",
    AccountSid: account.credentials.domain_id,
  });
  return { kind: "answer", method: "POST", url, body, headers: { "Content-Type": "application/json" } };
}

/**
 * Exotel: the Exophone's flow runs a Voicebot applet, which opens the WebSocket at its URL (the test pastes the
 * number's inbound_url as `url`: Exotel has no API to set it) once the call is answered, with Basic auth from the
 * URL's credentials when it has them. A `stream` callback: the upgrade to make, and `connected` then `start` (with
 * call_sid, account_sid, from, to, custom_parameters from the URL's query and media_format) as the frames to send.
 */
function placeExotelInbound(state: SimState, account: Account, o: InboundOptions): Callback {
  if (!o.url) throw new Error("an Exotel flow's Voicebot URL is pasted by hand: pass it as url");
  const u = new URL(o.url);
  const headers: Record<string, string> = { Upgrade: "websocket" };
  if (u.username) headers.Authorization = `Basic ${btoa(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`)}`;
  u.username = "";
  u.password = "";
  const sid = randomHex(16);
  const streamSid = `MZ${randomHex(16)}`;
  inboundCall(state, { id: sid, provider: "exotel", accountId: account.id, to: o.to, from: o.from, answerUrl: u.toString(), state: "answered" });
  // Up to three custom parameters ride on the applet's URL and come back in start.custom_parameters.
  const custom = Object.fromEntries([...u.searchParams].filter(([k]) => k !== "sample-rate").slice(0, 3));
  const frames = [
    JSON.stringify({ event: "connected" }),
    JSON.stringify({
      event: "start",
      sequence_number: "1",
      stream_sid: streamSid,
      start: {
        stream_sid: streamSid,
        call_sid: sid,
        account_sid: account.credentials.account_sid,
        from: o.from,
        to: o.to,
        custom_parameters: custom,
        media_format: { encoding: "audio/x-raw", sample_rate: "8000", bit_rate: "16" },
      },
    }),
  ];
  return { kind: "stream", method: "GET", url: u.toString(), headers, body: "", frames };
}
