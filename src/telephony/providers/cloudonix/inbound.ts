// Cloudonix calls that come in: the voice application's request for an incoming call (TwiML-like fields: CallSid,
// From, To, Direction=inbound, CallStatus, Session: the session token, which is the call's id as on dialed calls),
// CXML's `<Reject reason="busy"/>` over the cap, and attaching: the configuration's voice application's `url`
// updated (PATCH .../domains/{domain}/applications/{name}). Cloudonix signs nothing: the inbound URL's token is the
// proof.
import { carrierFetch, formFields, jsonOrNull, str } from "../kit";
import { SetupIncomplete } from "../provision-kit";
import type { ProviderInbound } from "../types";
import { cloudonixApi, cloudonixErrorMessage, cloudonixHeaders } from "./calls";

export const CXML_REJECT_BUSY = '<?xml version="1.0" encoding="UTF-8"?><Response><Reject reason="busy"/></Response>';

export const cloudonixInbound: ProviderInbound = {
  read(request, rawBody) {
    const p: Record<string, unknown> =
      jsonOrNull(rawBody) ?? (rawBody ? Object.fromEntries(formFields(rawBody)) : Object.fromEntries(new URL(request.url).searchParams));
    const id = str(p.Session || p.CallSid);
    // The application's request while the call rings; a later status (completed, a CDR) is not a new call.
    if (!id || !str(p.To) || str(p.Direction) !== "inbound" || (p.CallStatus !== undefined && !["ringing", "in-progress"].includes(str(p.CallStatus))))
      return null;
    return { to: str(p.To), from: str(p.From), callId: id };
  },

  busyDocument: () => ({ body: CXML_REJECT_BUSY, contentType: "application/xml" }),

  async route(ctx, env, _number, inboundUrl) {
    const name = str(ctx.config.application_name);
    if (!name) throw new SetupIncomplete("Cloudonix: the configuration has no voice application yet (save it again to create one)");
    const url = `${cloudonixApi(env)}/customers/self/domains/${encodeURIComponent(str(ctx.config.domain_id))}/applications/${encodeURIComponent(name)}`;
    const res = await carrierFetch(url, { method: "PATCH", headers: cloudonixHeaders(ctx), body: JSON.stringify({ url: inboundUrl, method: "POST" }) }, env);
    if (res.status < 200 || res.status >= 300)
      throw new Error(`Cloudonix refused to update the voice application (HTTP ${res.status}): ${cloudonixErrorMessage(res.json) ?? res.text.slice(0, 200)}`);
  },
};
