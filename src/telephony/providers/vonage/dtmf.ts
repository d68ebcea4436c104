// Keys pressed on a live Vonage call: PUT /v1/calls/{uuid}/dtmf with `digits` (the Voice API's "Play DTMF into a
// call"). Vonage's digits are 0-9, * and #, with `p` a half-second pause: our `w` becomes `p` and `W` two of them.
// A-D it does not take: those go as tones (the session plays them in-band when a carrier command is refused).
import { carrierFetch } from "../kit";
import { dtmfSent } from "../dtmf-kit";
import type { ProviderCalls } from "../types";
import { problemMessage, vonageAuth, vonageCallsUrl } from "./calls";

/** Our digits as Vonage writes them, or null when they hold a key Vonage cannot play (A-D). */
export function vonageDigits(digits: string): string | null {
  if (/[A-D]/i.test(digits)) return null;
  return digits.replace(/w/g, "p").replace(/W/g, "pp");
}

export const vonageSendDtmf: NonNullable<ProviderCalls["sendDtmf"]> = async (ctx, env, uuid, digits) => {
  const keys = vonageDigits(digits);
  if (keys === null) throw new Error("Vonage's DTMF command plays no A-D keys");
  const res = await carrierFetch(
    `${vonageCallsUrl(env)}/${encodeURIComponent(uuid)}/dtmf`,
    { method: "PUT", headers: { Authorization: await vonageAuth(ctx), "Content-Type": "application/json" }, body: JSON.stringify({ digits: keys }) },
    env,
  );
  dtmfSent("Vonage", res, problemMessage(res.json));
};
