// Keys pressed on a live Telnyx call: the `send_dtmf` command (Call Control v2), `digits` as given: Telnyx takes
// 0-9, A-D, * and #, with `w` (0.5 s) and `W` (1 s) as pauses, and plays each digit for its default 250 ms.
import { carrierFetch, jsonOrNull, str } from "../kit";
import { dtmfSent } from "../dtmf-kit";
import type { ProviderCalls } from "../types";
import { telnyxApi, telnyxErrorMessage, telnyxHeaders, telnyxPathParam } from "./calls";

export const telnyxSendDtmf: NonNullable<ProviderCalls["sendDtmf"]> = async (ctx, env, callControlId, digits) => {
  const res = await carrierFetch(
    `${telnyxApi(env)}/calls/${telnyxPathParam(callControlId)}/actions/send_dtmf`,
    { method: "POST", headers: telnyxHeaders(ctx), body: JSON.stringify({ digits }) },
    env,
  );
  dtmfSent("Telnyx", res, telnyxErrorMessage(res.json));
};

/** `call.dtmf.received`: Telnyx's webhook for each key the callee presses (its media stream reports it too). */
export function telnyxKeyPressed(rawBody: string): { callId: string; digit: string } | null {
  const data = jsonOrNull(rawBody)?.data;
  if (data?.event_type !== "call.dtmf.received") return null;
  const callId = str(data.payload?.call_control_id);
  const digit = str(data.payload?.digit);
  return callId && digit ? { callId, digit } : null;
}
