// Vonage's cold hand-over of a live call to a person: PUT /v1/calls/{uuid} with `action: transfer` and an inline NCCO
// (the Voice API's "Transfer a call with inline NCCO"). The caller's leg leaves the conversation edgedial's websocket
// is in and runs the new NCCO: a `connect` to the person's phone (`from` the run's caller ID, a Vonage number of the
// account, `timeout` the ring time). Vonage documents no way to bring a second leg to the caller while the first NCCO
// runs without moving it, so warm falls back to cold (docs/transfer.md).
import { carrierFetch, digits } from "../kit";
import type { ProviderCalls, TransferLeg } from "../types";
import { problemMessage, vonageAuth, vonageCallsUrl } from "./calls";

/** The PUT's body: the call transferred to an NCCO that connects the person (numbers as digits, as Vonage writes them). */
export function transferBody(leg: TransferLeg) {
  const connect = {
    action: "connect",
    ...(leg.from ? { from: digits(leg.from) } : {}),
    timeout: leg.timeoutSeconds,
    endpoint: [{ type: "phone", number: digits(leg.to) }],
  };
  return { action: "transfer", destination: { type: "ncco", ncco: [connect] } };
}

export const vonageTransfer: NonNullable<ProviderCalls["transfer"]> = {
  async cold(ctx, env, leg) {
    const res = await carrierFetch(
      `${vonageCallsUrl(env)}/${encodeURIComponent(leg.providerCallId)}`,
      { method: "PUT", headers: { Authorization: await vonageAuth(ctx), "Content-Type": "application/json" }, body: JSON.stringify(transferBody(leg)) },
      env,
    );
    if (res.status >= 200 && res.status < 300) return { ok: true };
    if (res.status === 0) return { ok: false, message: `Vonage ${res.text}` };
    return { ok: false, message: `Vonage refused the transfer (HTTP ${res.status}): ${problemMessage(res.json) ?? res.text.slice(0, 300)}` };
  },
};
