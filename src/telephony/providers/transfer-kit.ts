// What the carriers' transfers share: the `<Dial><Number>` document TwiML, CXML and Plivo XML write alike (a
// `callerId` the person sees, a `timeout` in seconds of ringing), and the conference both legs of a warm transfer join.
import { xmlEscape } from "./kit";

/** Dials the person; when the `<Dial>` ends (they hang up, or never answer) the document has run out and the call ends. */
export function dialNumberXml(to: string, from: string | null, timeoutSeconds: number): string {
  const callerId = from ? ` callerId="${xmlEscape(from)}"` : "";
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Dial${callerId} timeout="${timeoutSeconds}"><Number>${xmlEscape(to)}</Number></Dial></Response>`;
}

/**
 * A warm transfer's meeting point: whoever leaves ends it (`endConferenceOnExit`), so neither the caller nor the
 * person is left alone in it; no beep, and no hold music before the other joins.
 */
export function conferenceXml(room: string, before = ""): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?><Response>${before}<Dial><Conference beep="false" endConferenceOnExit="true" waitUrl="">` +
    `${xmlEscape(room)}</Conference></Dial></Response>`
  );
}
