// The simulated Plivo's (and Vobiz's) Transfer API: POST …/Account/{auth_id}/Call/{call_uuid}/ with `legs` (aleg,
// bleg, both; default aleg) and `aleg_url` / `aleg_method` (default POST), as Plivo documents "Transfer a call". The
// live call stops running its XML (its <Stream> ends: nothing after it runs) and the carrier fetches the new XML at
// aleg_url, signed like every callback, with `Event=Transfer`. That request waits in the call's pending callbacks.
import { json, type Account, type Callback, type SimCall, type SimState } from "../types";

const err = (status: number, message: string) => json(status, { api_id: crypto.randomUUID(), error: message });

export type TransferDeps = {
  /** The carrier's signed callback (form-encoded, as its answer requests). */
  callback(account: Account, url: string, fields: Record<string, string>, kind: Callback["kind"], method: "GET" | "POST"): Promise<Callback>;
  /** The fields every callback of the call carries (CallUUID, RequestUUID, From, To, Direction). */
  common(call: SimCall): Record<string, string>;
};

export async function transferCall(state: SimState, account: Account, callUuid: string, body: string, deps: TransferDeps): Promise<Response> {
  let p: Record<string, unknown>;
  try {
    p = JSON.parse(body || "{}");
  } catch {
    return err(400, "invalid JSON body");
  }
  const call = [...state.calls.values()].find((c) => c.accountId === account.id && c.extra.callUuid === callUuid && c.extra.callUuidSent);
  if (call?.state !== "answered") return err(404, "call not found or not in progress");
  const legs = p.legs ?? "aleg";
  if (legs !== "aleg" && legs !== "bleg" && legs !== "both") return err(400, "legs must be aleg, bleg or both");
  // Our simulated calls have no bridged B leg: transferring it is "no bridged leg found".
  if (legs !== "aleg") return err(400, "bleg not found: the call has no bridged leg");
  if (typeof p.aleg_url !== "string" || !/^https?:\/\//.test(p.aleg_url)) return err(400, "aleg_url is required when legs is aleg or both");
  const method = p.aleg_method ?? "POST";
  if (method !== "GET" && method !== "POST") return err(400, "aleg_method must be GET or POST");
  // The XML the call ran is done with: its stream's end no longer goes on to what followed it.
  call.extra.apiHangup = true;
  call.extra.transferredTo = p.aleg_url;
  call.pending.push(await deps.callback(account, p.aleg_url, { ...deps.common(call), CallStatus: "in-progress", Event: "Transfer" }, "answer", method));
  return json(202, { api_id: crypto.randomUUID(), message: "call transferred" });
}
