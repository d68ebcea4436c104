// Plivo and Vobiz calls that come in: the answer request the application posts for an incoming call (CallUUID, From,
// To, Direction=inbound), Plivo XML's `<Hangup reason="busy"/>` for a caller we cannot take, and attaching: the
// configuration's application updated (`POST …/Application/{app_id}/`) so its answer_url and hangup_url are the
// configuration's inbound URL.
import type { PlivoFamilyCarrier } from "./plivo-family";
import { carrierFetch, formFields, jsonOrNull, str } from "./kit";
import { SetupIncomplete } from "./provision-kit";
import type { ProviderInbound } from "./types";

export const FAMILY_REJECT_BUSY = '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup reason="busy"/></Response>';

const ENDED = new Set(["completed", "busy", "failed", "timeout", "no-answer", "cancel", "canceled"]);

export function familyInbound(carrier: PlivoFamilyCarrier): ProviderInbound {
  return {
    read(_request, rawBody) {
      const p: Record<string, string> = jsonOrNull(rawBody) ?? Object.fromEntries(formFields(rawBody));
      // The hangup_url's request (Event=Hangup, a final CallStatus) is the call's end, not a new call.
      if (!p.CallUUID || !p.To || p.Direction !== "inbound" || p.Event === "Hangup" || ENDED.has(p.CallStatus ?? "")) return null;
      return { to: String(p.To), from: String(p.From ?? ""), callId: String(p.CallUUID) };
    },

    busyDocument: () => ({ body: FAMILY_REJECT_BUSY, contentType: "application/xml" }),

    async route(ctx, env, _number, inboundUrl) {
      const appId = str(ctx.config.application_id);
      if (!appId) throw new SetupIncomplete(`${carrier.label}: the configuration has no application yet (save it again to create one)`);
      const res = await carrierFetch(
        `${carrier.accountUrl(ctx, env)}/Application/${encodeURIComponent(appId)}/`,
        {
          method: "POST",
          headers: carrier.headers(ctx),
          body: JSON.stringify({ answer_url: inboundUrl, answer_method: "POST", hangup_url: inboundUrl, hangup_method: "POST" }),
        },
        env,
      );
      if (res.status < 200 || res.status >= 300) {
        throw new Error(`${carrier.label} refused to update the application (HTTP ${res.status}): ${res.json?.error ?? res.text.slice(0, 200)}`);
      }
    },
  };
}
