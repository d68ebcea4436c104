// Keys pressed on a live Plivo-family call: POST …/Account/{auth_id}/Call/{call_uuid}/DTMF/ with `digits` (Plivo's
// "Send digits" API, which Vobiz mirrors). The carrier plays the tones on the call's A leg (the callee we dialed);
// `w` (half a second) and `W` (a second) are pauses there too.
import { carrierFetch } from "./kit";
import { dtmfSent } from "./dtmf-kit";
import type { PlivoFamilyCarrier } from "./plivo-family";
import type { ProviderCalls } from "./types";

export function familySendDtmf(carrier: PlivoFamilyCarrier): NonNullable<ProviderCalls["sendDtmf"]> {
  return async (ctx, env, callUuid, digits) => {
    const res = await carrierFetch(
      `${carrier.accountUrl(ctx, env)}/Call/${encodeURIComponent(callUuid)}/DTMF/`,
      { method: "POST", headers: carrier.headers(ctx), body: JSON.stringify({ digits }) },
      env,
    );
    dtmfSent(carrier.label, res, res.json?.error ?? res.json?.message);
  };
}
