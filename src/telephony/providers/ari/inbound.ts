// Calls that come in through Asterisk: the dialplan sends the caller's channel into the configuration's Stasis
// application (`Stasis(app)` or `Stasis(app,<number>)`), and the events socket sees its StasisStart. A channel we did
// not originate (its id is Asterisk's own, not `edgedial-…`) is a new call; the dialed number is the first Stasis
// argument when given, else the channel's dialplan extension. It is answered (`POST /channels/{id}/answer`) or hung up
// before answer with a reason Asterisk turns into a cause the caller's phone understands.
import type { InboundCall, ConfigContext, ProviderEnv } from "../types";
import { basicAuth, carrierFetch, str } from "../kit";
import { ariAuth, ariBase, ariEndpointRefusal, runIdOfChannel } from "./calls";

/** The call a StasisStart announces when its channel is not one edgedial made; null otherwise. */
export function incomingAriCall(ev: any): InboundCall | null {
  if (ev?.type !== "StasisStart") return null;
  const id = str(ev.channel?.id);
  if (!id || id.startsWith("edgedial-") || runIdOfChannel(id) !== null) return null;
  // A snoop (someone recording or listening in on a call) is not a caller.
  if (str(ev.channel?.name).startsWith("Snoop/")) return null;
  const args: unknown[] = Array.isArray(ev.args) ? ev.args : [];
  // An argument `run=…` is what our originate passes: never a dialed number.
  const arg = typeof args[0] === "string" && !args[0].includes("=") ? args[0].trim() : "";
  const exten = str(ev.channel?.dialplan?.exten);
  const to = arg || (exten && exten !== "s" ? exten : "");
  return { callId: id, to, from: str(ev.channel?.caller?.number) };
}

/**
 * Why a call is not taken → how Asterisk hangs it up (ARI's `reason`, before answer): busy (cause 17) over the cap,
 * unallocated (1) for a number the configuration does not have, rejected (21) for one that takes no calls now.
 */
export function refusalHangup(reason: string): "busy" | "unallocated" | "rejected" {
  if (reason === "concurrent_call_limit") return "busy";
  if (reason === "number_unknown") return "unallocated";
  return "rejected";
}

type Step = { ok: true } | { ok: false; status: number; message: string };

async function channelRequest(ctx: ConfigContext, env: ProviderEnv, path: string, method: "POST" | "DELETE"): Promise<Step> {
  const refusal = ariEndpointRefusal(ctx);
  if (refusal) return { ok: false, status: 0, message: refusal };
  const { user, password } = ariAuth(ctx);
  const res = await carrierFetch(`${ariBase(ctx)}${path}`, { method, headers: { Authorization: basicAuth(user, password), Accept: "application/json" } }, env);
  if (res.status >= 200 && res.status < 300) return { ok: true };
  return {
    ok: false,
    status: res.status,
    message: res.status === 0 ? "Could not reach the PBX" : `HTTP ${res.status}: ${res.json?.message ?? res.text.slice(0, 200)}`,
  };
}

/** Answers the caller's channel (in our application since its StasisStart). */
export function answerAriChannel(ctx: ConfigContext, env: ProviderEnv, channelId: string): Promise<Step> {
  return channelRequest(ctx, env, `/channels/${encodeURIComponent(channelId)}/answer`, "POST");
}

/** Hangs the caller's channel up with `reason` (a 404: the caller already went). */
export async function refuseAriChannel(ctx: ConfigContext, env: ProviderEnv, channelId: string, reason: string): Promise<Step> {
  const done = await channelRequest(ctx, env, `/channels/${encodeURIComponent(channelId)}?${new URLSearchParams({ reason })}`, "DELETE");
  return !done.ok && done.status === 404 ? { ok: true } : done;
}
