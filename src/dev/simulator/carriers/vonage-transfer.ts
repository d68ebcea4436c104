// The simulated Vonage's transfer of a live call (PUT /v1/calls/{uuid} with `action: transfer`), as the Voice API
// documents it: `destination` is `{type: "ncco", ncco: [...]}` (an inline NCCO) or `{type: "ncco", url: [one URL]}`.
// The call's leg leaves its conversation (the websocket leg edgedial holds stays behind) and runs the new NCCO; the
// simulator keeps it on the call (`extra.transferNcco`) and checks the `connect` actions' phone endpoints.
import { DIGITS, type SimCall } from "../types";

type Invalid = Array<{ name: string; reason: string }>;

/** The problems with a transfer's body (empty: accepted). */
export function transferProblems(p: any): Invalid {
  const d = p?.destination;
  if (d?.type !== "ncco") return [{ name: "destination.type", reason: "must be ncco" }];
  if (Array.isArray(d.url))
    return d.url.length === 1 && /^https?:\/\//.test(String(d.url[0])) ? [] : [{ name: "destination.url", reason: "must be an array of one URL" }];
  if (!Array.isArray(d.ncco) || !d.ncco.length) return [{ name: "destination", reason: "ncco (a non-empty array) or url is required" }];
  const invalid: Invalid = [];
  d.ncco.forEach((a: any, i: number) => {
    if (typeof a?.action !== "string") invalid.push({ name: `destination.ncco[${i}].action`, reason: "is required" });
    if (a?.action !== "connect") return;
    if (!Array.isArray(a.endpoint) || a.endpoint.length !== 1)
      invalid.push({ name: `destination.ncco[${i}].endpoint`, reason: "must be an array of one endpoint" });
    for (const e of a.endpoint ?? [])
      if (e?.type === "phone" && !DIGITS.test(String(e.number ?? "")))
        invalid.push({ name: `destination.ncco[${i}].endpoint.number`, reason: "must be digits" });
    if (a.from !== undefined && !DIGITS.test(String(a.from))) invalid.push({ name: `destination.ncco[${i}].from`, reason: "must be digits" });
    if (a.timeout !== undefined && !(Number.isInteger(a.timeout) && a.timeout >= 3 && a.timeout <= 7200))
      invalid.push({ name: `destination.ncco[${i}].timeout`, reason: "must be 3..7200 seconds" });
  });
  return invalid;
}

/** The accepted transfer: the call runs the new NCCO; its websocket's end no longer resumes the old one. */
export function transferred(call: SimCall, p: any): void {
  call.extra.transferNcco = p.destination.ncco ?? null;
  call.extra.transferUrl = p.destination.url?.[0] ?? null;
  call.extra.apiHangup = true;
}
