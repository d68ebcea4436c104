// Plivo's and Vobiz's cold transfer: the Transfer API, POST …/Account/{auth_id}/Call/{call_uuid}/ with `legs: "aleg"`
// and `aleg_url`: the carrier fetches new XML there (edgedial's transfer document, `<Dial><Number>`), which ends the
// call's stream and dials the person. Neither documents a way to dial a second leg and bridge it into the live call
// from the API, so warm falls back to cold (docs/transfer.md).
import { carrierFetch, digits } from "./kit";
import type { PlivoFamilyCarrier } from "./plivo-family";
import { dialNumberXml } from "./transfer-kit";
import type { ProviderCalls } from "./types";

export function familyTransfer(carrier: PlivoFamilyCarrier): NonNullable<ProviderCalls["transfer"]> {
  return {
    async cold(ctx, env, leg) {
      const res = await carrierFetch(
        `${carrier.accountUrl(ctx, env)}/Call/${encodeURIComponent(leg.providerCallId)}/`,
        { method: "POST", headers: carrier.headers(ctx), body: JSON.stringify({ legs: "aleg", aleg_url: leg.documentUrl, aleg_method: "POST" }) },
        env,
      );
      if (res.status >= 200 && res.status < 300) return { ok: true };
      if (res.status === 0) return { ok: false, message: `${carrier.label} ${res.text}` };
      return {
        ok: false,
        message: `${carrier.label} refused the transfer (HTTP ${res.status}): ${res.json?.error ?? res.json?.message ?? res.text.slice(0, 300)}`,
      };
    },
    // Plivo XML's <Dial> takes DIGITS for <Number> and callerId, as the originate request does.
    document: (leg) => ({
      body: dialNumberXml(digits(leg.to), leg.from ? digits(leg.from) : null, leg.timeoutSeconds),
      contentType: "application/xml",
    }),
  };
}
