// Twilio calls that come in: the voice request Twilio posts to a number's VoiceUrl (CallSid, From, To,
// Direction=inbound), TwiML's `<Reject reason="busy"/>` for a caller we cannot take, and attaching a number: the
// IncomingPhoneNumber found by its PhoneNumber, then its VoiceUrl and StatusCallback updated (documented REST operations).
import type { ConfigContext, ProviderEnv, ProviderInbound } from "../types";
import { baseUrl, basicAuth, carrierFetch, formFields, str } from "../kit";
import { TWILIO_API } from "./calls";

const numbersUrl = (ctx: ConfigContext, env: ProviderEnv) =>
  `${baseUrl(env, "twilio", TWILIO_API)}/2010-04-01/Accounts/${encodeURIComponent(str(ctx.config.account_sid))}/IncomingPhoneNumbers`;

/** TwiML's busy refusal: the caller hears a busy signal and Twilio never answers (nothing is billed). */
export const REJECT_BUSY = '<?xml version="1.0" encoding="UTF-8"?><Response><Reject reason="busy"/></Response>';

export const twilioInbound: ProviderInbound = {
  read(_request, rawBody) {
    const p = Object.fromEntries(formFields(rawBody));
    // The voice request comes while the call rings; the number's status callback (completed) is not a new call.
    if (!p.CallSid || !p.To || (p.Direction && p.Direction !== "inbound") || (p.CallStatus && p.CallStatus !== "ringing")) return null;
    return { to: p.To, from: p.From ?? "", callId: p.CallSid };
  },

  busyDocument: () => ({ body: REJECT_BUSY, contentType: "text/xml" }),

  async route(ctx, env, number, inboundUrl) {
    const headers = { Authorization: basicAuth(str(ctx.config.account_sid), str(ctx.config.auth_token)), Accept: "application/json" };
    const found = await carrierFetch(`${numbersUrl(ctx, env)}.json?${new URLSearchParams({ PhoneNumber: number })}`, { method: "GET", headers }, env);
    if (found.status !== 200) throw new Error(`Twilio: could not look up ${number} (HTTP ${found.status}): ${found.json?.message ?? found.text.slice(0, 200)}`);
    const sid = (found.json?.incoming_phone_numbers ?? []).find((n: any) => n?.phone_number === number)?.sid;
    if (!sid) throw new Error(`Twilio: ${number} is not a phone number of this account`);
    // The number's StatusCallback reports the call's end (completed, with its duration) to the same URL.
    const form = new URLSearchParams({ VoiceUrl: inboundUrl, VoiceMethod: "POST", StatusCallback: inboundUrl, StatusCallbackMethod: "POST" });
    const res = await carrierFetch(
      `${numbersUrl(ctx, env)}/${encodeURIComponent(sid)}.json`,
      { method: "POST", headers: { ...headers, "Content-Type": "application/x-www-form-urlencoded" }, body: form.toString() },
      env,
    );
    if (res.status < 200 || res.status >= 300)
      throw new Error(`Twilio refused to update ${number} (HTTP ${res.status}): ${res.json?.message ?? res.text.slice(0, 200)}`);
  },
};
