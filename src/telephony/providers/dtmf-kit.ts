// What the carriers' DTMF commands share: a refusal becomes an Error naming the carrier and its words, which the call
// session reads as "play the keys as tones instead" (in-band DTMF works on every carrier).
import type { CarrierResponse } from "./kit";

/** Done on a 2xx; else throws with the carrier's own message (never a secret: it is the carrier's answer). */
export function dtmfSent(label: string, res: CarrierResponse, message: string | null | undefined): void {
  if (res.status >= 200 && res.status < 300) return;
  throw new Error(`${label} refused the DTMF command (HTTP ${res.status || "no answer"}): ${message ?? res.text.slice(0, 200)}`);
}
