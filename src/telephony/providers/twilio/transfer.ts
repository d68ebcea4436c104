// Twilio's hand-over of a live call to a person. Cold: the call's running TwiML is replaced by a `<Dial>` (an update
// of the call, POST Calls/{sid}.json with `Twiml`): the media stream ends and Twilio dials the person. Warm: a new
// call to the person whose TwiML plays the whisper, then joins a conference; when it is answered (its status
// callback, `in-progress`), the caller's call is updated into the same conference and edgedial leaves. A person who
// never answers (`no-answer`, `busy`, `failed`) leaves the caller with the agent.
import { basicAuth, baseUrl, carrierFetch, str, xmlEscape } from "../kit";
import { conferenceXml, dialNumberXml } from "../transfer-kit";
import type { ConfigContext, ProviderCalls, ProviderEnv, TransferLeg, TransferProgress, TransferResult } from "../types";
import { createCall, TWILIO_API, TWILIO_MAX_SAY } from "./calls";

const callUrl = (ctx: ConfigContext, env: ProviderEnv, sid: string) =>
  `${baseUrl(env, "twilio", TWILIO_API)}/2010-04-01/Accounts/${encodeURIComponent(str(ctx.config.account_sid))}/Calls/${encodeURIComponent(sid)}.json`;

/** Replaces the live call's TwiML (Twilio's "modify a call in progress"). */
async function updateCall(ctx: ConfigContext, env: ProviderEnv, sid: string, twiml: string): Promise<TransferResult> {
  const res = await carrierFetch(
    callUrl(ctx, env, sid),
    {
      method: "POST",
      headers: {
        Authorization: basicAuth(str(ctx.config.account_sid), str(ctx.config.auth_token)),
        "Content-Type": "application/x-www-form-urlencoded",
        Accept: "application/json",
      },
      body: new URLSearchParams({ Twiml: twiml }).toString(),
    },
    env,
  );
  if (res.status >= 200 && res.status < 300) return { ok: true };
  if (res.status === 0) return { ok: false, message: `Twilio ${res.text}` };
  const code = res.json?.code ? `, code ${res.json.code}` : "";
  return { ok: false, message: `Twilio refused the transfer (HTTP ${res.status}${code}): ${res.json?.message ?? res.text.slice(0, 300)}` };
}

/** The person's leg: the whisper (the agent's voice, else Twilio's `<Say>` of the text), then the conference. */
export function personTwiml(leg: TransferLeg): string {
  const w = leg.whisper;
  // A summary is a few sentences: one `<Say>` holds it (cut at Twilio's limit).
  const before = w?.url ? `<Play>${xmlEscape(w.url)}</Play>` : w?.text ? `<Say>${xmlEscape(w.text.slice(0, TWILIO_MAX_SAY))}</Say>` : "";
  return conferenceXml(leg.room ?? `edgedial-${leg.runId}`, before);
}

/** The person's call (Calls.json): rings `timeoutSeconds`, reports to the transfer's status URL. */
export function personForm(leg: TransferLeg): URLSearchParams {
  const form = new URLSearchParams();
  form.append("To", leg.to);
  form.append("From", leg.from ?? "");
  form.append("Twiml", personTwiml(leg));
  form.append("StatusCallback", leg.statusUrl);
  form.append("StatusCallbackMethod", "POST");
  for (const ev of ["initiated", "ringing", "answered", "completed"]) form.append("StatusCallbackEvent", ev);
  form.append("Timeout", String(leg.timeoutSeconds));
  return form;
}

/** Twilio's CallStatus of the person's leg, read into where the transfer stands (`in-progress` is for `join`). */
export function personState(status: string): "answered" | "pending" | "no_answer" | "failed" {
  if (status === "in-progress") return "answered";
  if (status === "no-answer" || status === "busy") return "no_answer";
  if (status === "failed" || status === "canceled") return "failed";
  return "pending";
}

export const twilioTransfer: NonNullable<ProviderCalls["transfer"]> = {
  cold: (ctx, env, leg) => updateCall(ctx, env, leg.providerCallId, dialNumberXml(leg.to, leg.from, leg.timeoutSeconds)),
  async warm(ctx, env, leg) {
    const placed = await createCall(ctx, env, personForm(leg));
    return placed.ok
      ? { ok: true, legId: placed.providerCallId }
      : { ok: false, message: placed.message.replace("refused the call", "refused the call to the person") };
  },
  async progress(ctx, env, leg, rawBody): Promise<TransferProgress> {
    // Only a warm transfer's person's call reports here (a cold one's <Dial> has no callback): a report of any other
    // call must never move the caller into a conference.
    if (leg.mode !== "warm") return { outcome: "pending" };
    const p = new URLSearchParams(rawBody);
    const status = p.get("CallStatus") ?? "";
    const state = personState(status);
    if (state === "pending") return { outcome: "pending" };
    if (state === "no_answer") return { outcome: "no_answer", message: status === "busy" ? "The person's line was busy" : "The person did not answer" };
    if (state === "failed")
      return { outcome: "failed", message: `The call to the person ${status}${p.get("SipResponseCode") ? ` (SIP ${p.get("SipResponseCode")})` : ""}` };
    // Answered: the caller joins the person's conference; the caller's stream ends and edgedial leaves the call.
    const joined = await updateCall(ctx, env, leg.providerCallId, conferenceXml(leg.room ?? `edgedial-${leg.runId}`));
    return joined.ok ? { outcome: "connected" } : { outcome: "failed", message: joined.message };
  },
};
