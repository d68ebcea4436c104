// Telnyx calls that come in (Call Control v2): the application's `call.initiated` with `direction: "incoming"` is
// the new call, and Telnyx waits for a command rather than a document. The call is answered with the same stream
// settings a dialed call gets and its later events sent to its run's status URL (`webhook_url` on answer); refused
// busy with `reject` (cause USER_BUSY: the caller hears busy, the call is never answered); a number that takes no
// calls is answered, hears the apology (`speak`) and is hung up once `call.speak.ended` comes back. Attaching points
// the configuration's Call Control application's `webhook_event_url` at the inbound URL.
import { base64Decode, base64Encode } from "../../../lib/crypto";
import { carrierFetch, jsonOrNull, str } from "../kit";
import { SetupIncomplete } from "../provision-kit";
import type { ConfigContext, InboundCall, ProviderEnv, ProviderInbound } from "../types";
import { streamParams, telnyxApi, telnyxConnectionId, telnyxErrorMessage, telnyxHeaders, telnyxPathParam } from "./calls";

const enc = new TextEncoder();
/** The client_state a refused call carries, so its call.answered and call.speak.ended are known for what they are. */
export const REFUSED_STATE = base64Encode(enc.encode("inbound-refused"));
const isRefused = (clientState: unknown) => {
  try {
    return new TextDecoder().decode(base64Decode(str(clientState))) === "inbound-refused";
  } catch {
    return false;
  }
};

async function command(ctx: ConfigContext, env: ProviderEnv, id: string, action: string, body: Record<string, unknown>): Promise<void> {
  const res = await carrierFetch(
    `${telnyxApi(env)}/calls/${telnyxPathParam(id)}/actions/${action}`,
    { method: "POST", headers: telnyxHeaders(ctx), body: JSON.stringify(body) },
    env,
  );
  if (res.status >= 200 && res.status < 300) return;
  throw new Error(`Telnyx refused the ${action} command (HTTP ${res.status || "no answer"}): ${telnyxErrorMessage(res.json) ?? res.text.slice(0, 200)}`);
}

/** The answer command of a call that goes to its run (command_id: a redelivered call.initiated answers it once). */
export function answerBody(runId: number, statusUrl: string, streamUrl: string | null): Record<string, unknown> {
  return {
    client_state: base64Encode(enc.encode(`run:${runId}`)),
    command_id: `inbound-answer-${runId}`,
    webhook_url: statusUrl,
    webhook_url_method: "POST",
    ...(streamUrl ? streamParams(streamUrl) : {}),
  };
}

export const telnyxInbound: ProviderInbound = {
  read(_request, rawBody) {
    const data = jsonOrNull(rawBody)?.data;
    const p = data?.payload;
    if (data?.event_type !== "call.initiated" || p?.direction !== "incoming" || typeof p.call_control_id !== "string" || !p.to) return null;
    return { to: String(p.to), from: String(p.from ?? ""), callId: p.call_control_id };
  },

  // Telnyx has no document: the refusals are commands (below).
  busyDocument: () => null,

  async route(ctx, env, _number, inboundUrl) {
    const id = telnyxConnectionId(ctx);
    if (!id) throw new SetupIncomplete("Telnyx: the configuration has no Call Control application yet (save it again to create one)");
    const url = `${telnyxApi(env)}/call_control_applications/${encodeURIComponent(id)}`;
    // The update takes application_name and webhook_event_url together (both required): the name is kept as it is.
    const got = await carrierFetch(url, { method: "GET", headers: telnyxHeaders(ctx) }, env);
    const name = got.json?.data?.application_name;
    if (got.status !== 200 || typeof name !== "string")
      throw new Error(`Telnyx: could not read Call Control application ${id} (HTTP ${got.status}): ${telnyxErrorMessage(got.json) ?? got.text.slice(0, 200)}`);
    const body = { application_name: name, webhook_event_url: inboundUrl };
    const res = await carrierFetch(url, { method: "PATCH", headers: telnyxHeaders(ctx), body: JSON.stringify(body) }, env);
    if (res.status < 200 || res.status >= 300)
      throw new Error(`Telnyx refused to update the Call Control application (HTTP ${res.status}): ${telnyxErrorMessage(res.json) ?? res.text.slice(0, 200)}`);
  },

  commands: {
    answer: (ctx, env, call, o) => command(ctx, env, call.callId, "answer", answerBody(o.runId, o.statusUrl, o.streamUrl)),
    busy: (ctx, env, call: InboundCall) => command(ctx, env, call.callId, "reject", { cause: "USER_BUSY", command_id: "inbound-busy" }),
    refuse: (ctx, env, call) => command(ctx, env, call.callId, "answer", { client_state: REFUSED_STATE, command_id: "inbound-refuse" }),
    async event(ctx, env, rawBody, text) {
      const data = jsonOrNull(rawBody)?.data;
      const id = data?.payload?.call_control_id;
      if (typeof id !== "string" || !isRefused(data.payload.client_state)) return;
      if (data.event_type === "call.answered") {
        const speak = { payload: text, voice: "female", language: "en-US", service_level: "basic", client_state: REFUSED_STATE, command_id: "inbound-apology" };
        await command(ctx, env, id, "speak", speak);
      } else if (data.event_type === "call.speak.ended") {
        await command(ctx, env, id, "hangup", { command_id: "inbound-apology-hangup" });
      }
    },
  },
};
