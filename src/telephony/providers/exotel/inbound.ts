// Exotel's calls that come in: the Exophone's flow runs a Voicebot applet whose URL is our wss:// inbound stream, and
// Exotel opens it once the call is answered with `connected`, then `start` (call_sid, account_sid, from, to,
// custom_parameters, media_format), as its WebSocket protocol documents. There is no HTTP request before the socket:
// the call's numbers are read from `start`.
import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import type { InboundCall } from "../types";

/** What one opening message says: Exotel's `connected`, its `start` (the call), or anything else. */
export type OpeningMessage =
  | { kind: "connected" }
  | { kind: "start"; call: InboundCall; accountSid: string; customParameters: Record<string, string> }
  | { kind: "other" };

/**
 * A number as Exotel writes it, as E.164 where it can be read: Exotel's examples are E.164, but its APIs also write
 * Indian numbers nationally (`08047112345`), so those are read as Indian. Anything else stays as written.
 */
export function exotelNumber(raw: unknown): string {
  const v = typeof raw === "string" ? raw.trim() : "";
  if (!v) return "";
  const n = parsePhoneNumberFromString(v, "IN");
  return n?.isValid() ? n.number : v;
}

const text = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : "");

export function readOpening(data: string | ArrayBuffer): OpeningMessage {
  if (typeof data !== "string") return { kind: "other" };
  let m: any;
  try {
    m = JSON.parse(data);
  } catch {
    return { kind: "other" };
  }
  if (m?.event === "connected") return { kind: "connected" };
  if (m?.event !== "start" || !m.start || typeof m.start !== "object") return { kind: "other" };
  const s = m.start;
  const callId = text(s.call_sid);
  const to = exotelNumber(s.to);
  if (!callId || !to) return { kind: "other" };
  const custom = s.custom_parameters && typeof s.custom_parameters === "object" ? s.custom_parameters : {};
  return {
    kind: "start",
    call: { callId, to, from: exotelNumber(s.from) },
    accountSid: text(s.account_sid),
    customParameters: Object.fromEntries(Object.entries(custom).map(([k, v]) => [k, text(v)])),
  };
}
