// Telnyx hand-over of a live call to a person (Call Control v2). Cold: the `transfer` command on the caller's call;
// Telnyx dials the person and bridges them itself, and edgedial leaves at once. Warm: edgedial dials the person's leg
// with POST /v2/calls while the caller stays with the agent; on that leg's call.answered the whisper plays to the
// person only (`playback_start` of the whisper WAV, or `speak` of its text when there is none or playback is refused), and on its
// call.playback.ended (or call.speak.ended) the caller's call is `bridge`d with the person's and our stream stops.
// The person's leg reports to the transfer's own status URL (webhook_url), signed with Ed25519 like every callback.
import { base64Decode, base64Encode } from "../../../lib/crypto";
import { log } from "../../../lib/log";
import { carrierFetch, jsonOrNull, str } from "../kit";
import type { ConfigContext, ProviderEnv, TransferLeg, TransferProgress, TransferResult } from "../types";
import { TELNYX_MAX_SPEAK, telnyxApi, telnyxConnectionId, telnyxErrorMessage, telnyxHeaders, telnyxPathParam } from "./calls";

/** timeout_secs is documented as 5 to 600 seconds, for a dial and a transfer alike. */
export const telnyxRingSeconds = (s: number) => Math.min(600, Math.max(5, Math.round(s)));

const enc = new TextEncoder();
/** The client_state every webhook of the person's leg carries: which run's transfer, and how. */
export const transferState = (leg: Pick<TransferLeg, "mode" | "runId">) => base64Encode(enc.encode(`transfer:${leg.mode}:${leg.runId}`));
function stateOf(clientState: unknown): { mode: string; runId: number } | null {
  try {
    const m = /^transfer:(cold|warm):(\d+)$/.exec(new TextDecoder().decode(base64Decode(str(clientState))));
    return m ? { mode: m[1], runId: Number(m[2]) } : null;
  } catch {
    return null;
  }
}

async function post(ctx: ConfigContext, env: ProviderEnv, path: string, body: Record<string, unknown>) {
  return carrierFetch(`${telnyxApi(env)}${path}`, { method: "POST", headers: telnyxHeaders(ctx), body: JSON.stringify(body) }, env);
}
const action = (ctx: ConfigContext, env: ProviderEnv, id: string, name: string, body: Record<string, unknown>) =>
  post(ctx, env, `/calls/${telnyxPathParam(id)}/actions/${name}`, body);
const ok = (res: { status: number }) => res.status >= 200 && res.status < 300;
const refusal = (what: string, res: { status: number; json: any; text: string }) =>
  `Telnyx refused the ${what} (HTTP ${res.status || "no answer"}): ${telnyxErrorMessage(res.json) ?? res.text.slice(0, 200)}`;

/** The cold transfer's body: the person, the caller ID they see, how long to ring, and where their leg reports. */
export function coldTransferBody(leg: TransferLeg): Record<string, unknown> {
  return {
    to: leg.to,
    ...(leg.from ? { from: leg.from } : {}),
    timeout_secs: telnyxRingSeconds(leg.timeoutSeconds),
    webhook_url: leg.statusUrl,
    webhook_url_method: "POST",
    target_leg_client_state: transferState(leg),
  };
}

/** The warm transfer's dial of the person's leg: a call of its own, through the same Call Control application. */
export function warmDialBody(ctx: ConfigContext, leg: TransferLeg): Record<string, unknown> {
  return {
    connection_id: telnyxConnectionId(ctx),
    to: leg.to,
    from: leg.from ?? "",
    timeout_secs: telnyxRingSeconds(leg.timeoutSeconds),
    webhook_url: leg.statusUrl,
    webhook_url_method: "POST",
    client_state: transferState(leg),
  };
}

async function cold(ctx: ConfigContext, env: ProviderEnv, leg: TransferLeg): Promise<TransferResult> {
  const res = await action(ctx, env, leg.providerCallId, "transfer", coldTransferBody(leg));
  return ok(res) ? { ok: true } : { ok: false, message: refusal("transfer command", res) };
}

async function warm(ctx: ConfigContext, env: ProviderEnv, leg: TransferLeg): Promise<TransferResult> {
  const res = await post(ctx, env, "/calls", warmDialBody(ctx, leg));
  const id = res.json?.data?.call_control_id;
  if (ok(res) && typeof id === "string") return { ok: true, legId: id };
  return { ok: false, message: refusal("dial of the person's leg", res) };
}

/** Hang-up causes of a leg that never reached the person (the call.hangup mapping of carriers.md §4). */
const NOT_REACHED: Record<string, TransferProgress["outcome"]> = {
  timeout: "no_answer",
  no_answer: "no_answer",
  user_busy: "no_answer",
  call_rejected: "no_answer",
  originator_cancel: "no_answer",
  not_found: "failed",
};

/** The person is told about the call: the whisper WAV, or its words spoken by Telnyx when the playback is refused. */
async function whisper(ctx: ConfigContext, env: ProviderEnv, leg: TransferLeg, personId: string): Promise<boolean> {
  const w = leg.whisper;
  if (!w) return false;
  if (w.url) {
    const played = await action(ctx, env, personId, "playback_start", { audio_url: w.url, command_id: `whisper-${leg.runId}` });
    if (ok(played)) return true;
    log("warning", "telnyx_whisper_playback_refused", { run_id: leg.runId, status: played.status });
  }
  if (!w.text) return false;
  const body = {
    payload: w.text.slice(0, TELNYX_MAX_SPEAK),
    voice: "female",
    language: "en-US",
    service_level: "basic",
    command_id: `whisper-say-${leg.runId}`,
  };
  return ok(await action(ctx, env, personId, "speak", body));
}

/**
 * The caller joins the person; our stream leaves the caller's call (the session ends on `connected`). On the wire the
 * other call is `call_control_id` (the telnyx SDK's `call_control_id_to_bridge_with` is renamed to it when sent).
 */
async function bridge(ctx: ConfigContext, env: ProviderEnv, leg: TransferLeg, personId: string): Promise<TransferProgress> {
  const res = await action(ctx, env, leg.providerCallId, "bridge", { call_control_id: personId, command_id: `bridge-${leg.runId}` });
  if (!ok(res)) {
    // The caller is gone (or the bridge refused): the person is not left on a dead line.
    await action(ctx, env, personId, "hangup", {});
    return { outcome: "failed", message: refusal("bridge command", res) };
  }
  const stopped = await action(ctx, env, leg.providerCallId, "streaming_stop", {});
  if (!ok(stopped)) log("warning", "telnyx_streaming_stop_refused", { run_id: leg.runId, status: stopped.status });
  return { outcome: "connected" };
}

/** One verified webhook at the transfer's status URL, for the leg edgedial asked for. */
async function progress(ctx: ConfigContext, env: ProviderEnv, leg: TransferLeg, rawBody: string): Promise<TransferProgress> {
  const data = jsonOrNull(rawBody)?.data;
  const p = data?.payload ?? {};
  const personId = str(p.call_control_id);
  // Events of the caller's own call (or not of this transfer) say nothing about the person's leg.
  if (!personId || personId === leg.providerCallId || stateOf(p.client_state)?.runId !== leg.runId) return { outcome: "pending" };
  switch (data?.event_type) {
    case "call.answered":
      if (leg.mode !== "warm") return { outcome: "pending" };
      return (await whisper(ctx, env, leg, personId)) ? { outcome: "pending" } : bridge(ctx, env, leg, personId);
    case "call.playback.ended":
    case "call.speak.ended":
      return leg.mode === "warm" ? bridge(ctx, env, leg, personId) : { outcome: "pending" };
    case "call.hangup": {
      const cause = str(p.hangup_cause);
      const notReached = NOT_REACHED[cause];
      // Cold: the transfer was settled when Telnyx took it; a hang-up after the person answered is the call's end.
      if (leg.mode === "cold" && !notReached) return { outcome: "pending" };
      const outcome = notReached ?? "failed";
      const message = `The person's phone: ${cause || "unknown cause"}${p.sip_hangup_cause ? ` (SIP ${p.sip_hangup_cause})` : ""}`;
      // Cold: edgedial has left the caller, whom Telnyx keeps on the line after a transfer that reached nobody.
      if (leg.mode === "cold" && notReached) await action(ctx, env, leg.providerCallId, "hangup", {});
      return { outcome, message };
    }
    default:
      return { outcome: "pending" };
  }
}

export const telnyxTransfer = { cold, warm, progress };
