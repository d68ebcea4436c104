// Telnyx Call Control v2: JSON originate, no answer document (commands instead),
// webhooks signed with Ed25519 over `timestamp|raw body`, ±300 s.
import type { CallStatus, ConfigContext, OriginateResult, ProviderCalls, ProviderEnv, StatusUpdate } from "../types";
import { base64Decode, base64Encode } from "../../../lib/crypto";
import { clock } from "../../../lib/clock";
import { speechChunks } from "../../../lib/speech";
import { baseUrl, carrierFetch, credentialsResult, jsonOrNull, originateFetch, placed, refused, speakable, str } from "../kit";
import { telnyxMedia } from "./media";

export const TELNYX_API = "https://api.telnyx.com";
export const TELNYX_TOLERANCE_SECONDS = 300;
/** A speak command's `payload` takes at most 3,000 characters. */
export const TELNYX_MAX_SPEAK = 3000;

const enc = new TextEncoder();
export const telnyxApi = (env: ProviderEnv) => `${baseUrl(env, "telnyx", TELNYX_API)}/v2`;
export const telnyxHeaders = (ctx: ConfigContext) => ({
  Authorization: `Bearer ${str(ctx.config.api_key)}`,
  "Content-Type": "application/json",
  Accept: "application/json",
});

/** The call's id in the answer to a dial: data.call_control_id. */
const callControlId = (json: any) => json?.data?.call_control_id;

/** The connection (Call Control App) to dial through: the configured one, else the provisioned one. */
export const telnyxConnectionId = (ctx: ConfigContext) => str(ctx.config.connection_id) || str(ctx.state.connection_id);

export function telnyxErrorMessage(json: any): string | null {
  const e = json?.errors?.[0];
  if (!e) return null;
  return [e.title, e.detail].filter(Boolean).join(": ") + (e.code ? ` (code ${e.code})` : "");
}

/** Verifies `telnyx-signature-ed25519` over `timestamp|body` with the account's public key. */
export async function verifyTelnyxSignature(
  publicKeyB64: string,
  timestamp: string | null,
  signatureB64: string | null,
  rawBody: string,
  nowMs = clock.now(),
): Promise<boolean> {
  if (!publicKeyB64 || !timestamp || !signatureB64 || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > TELNYX_TOLERANCE_SECONDS) return false;
  try {
    const pub = base64Decode(publicKeyB64);
    const sig = base64Decode(signatureB64);
    if (pub.length !== 32 || sig.length !== 64) return false;
    const key = await crypto.subtle.importKey("raw", pub, { name: "Ed25519" }, false, ["verify"]);
    return await crypto.subtle.verify("Ed25519", key, sig, enc.encode(`${timestamp}|${rawBody}`));
  } catch {
    return false; // bad base64 or key material
  }
}

const HANGUP: Record<string, { status: CallStatus; unanswered?: CallStatus }> = {
  normal_clearing: { status: "completed", unanswered: "failed" },
  time_limit: { status: "completed", unanswered: "failed" },
  unspecified: { status: "completed", unanswered: "failed" },
  user_busy: { status: "busy" },
  no_answer: { status: "no_answer" },
  timeout: { status: "no_answer" },
  call_rejected: { status: "declined" },
  originator_cancel: { status: "canceled" },
  not_found: { status: "failed" },
};

/** Maps one Telnyx webhook envelope to normalized updates (AMD yields an in_progress carrying the verdict). */
export function mapTelnyx(body: any): StatusUpdate[] {
  const data = body?.data;
  const p = data?.payload ?? {};
  const base: StatusUpdate = { status: "initiated", providerCallId: p.call_control_id || undefined };
  if (typeof data?.occurred_at === "string" && Number.isFinite(Date.parse(data.occurred_at))) base.at = new Date(Date.parse(data.occurred_at)).toISOString();
  switch (data?.event_type) {
    case "call.initiated":
      return [{ ...base, status: "initiated" }];
    case "call.answered":
      return [{ ...base, status: "in_progress" }];
    case "call.machine.detection.ended":
    case "call.machine.premium.detection.ended": {
      const result = str(p.result);
      return result ? [{ ...base, status: "in_progress", answeredBy: result }] : [];
    }
    case "call.hangup": {
      const cause = str(p.hangup_cause);
      const m = HANGUP[cause] ?? { status: "completed", unanswered: "failed" };
      const u: StatusUpdate = { ...base, status: m.status };
      if (m.unanswered) u.unansweredStatus = m.unanswered;
      if (m.status === "failed" || m.unanswered === "failed")
        u.error = `Call ended: ${cause || "unknown cause"}${p.sip_hangup_cause ? ` (SIP ${p.sip_hangup_cause})` : ""}`;
      const start = Date.parse(p.start_time ?? "");
      const end = Date.parse(p.end_time ?? "");
      if (Number.isFinite(start) && Number.isFinite(end) && end >= start) u.durationSeconds = Math.round((end - start) / 1000);
      return [u];
    }
    default:
      return [];
  }
}

/**
 * A call control id as a path segment, encoded as Telnyx's own SDK encodes path params (RFC 3986 pchar stays as is,
 * so `v3:…` keeps its colon; anything else is percent-encoded).
 */
export const telnyxPathParam = (id: string): string => id.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@]+/g, encodeURIComponent);

async function command(ctx: ConfigContext, env: ProviderEnv, id: string, action: string, body: Record<string, unknown>) {
  return carrierFetch(
    `${telnyxApi(env)}/calls/${telnyxPathParam(id)}/actions/${action}`,
    {
      method: "POST",
      headers: telnyxHeaders(ctx),
      body: JSON.stringify(body),
    },
    env,
  );
}

/** A command's answer: done, or an Error naming the command and the carrier's words. */
function commandDone(res: Awaited<ReturnType<typeof command>>, action: string): void {
  if (res.status >= 200 && res.status < 300) return;
  throw new Error(`Telnyx refused the ${action} command (HTTP ${res.status || "no answer"}): ${telnyxErrorMessage(res.json) ?? res.text}`);
}

// The greeting's parts are spoken one after another: each speak command carries its part's index in client_state,
// which Telnyx echoes in that part's call.speak.ended, and command_id makes a redelivered event harmless (Telnyx
// ignores a repeated command_id on a call).
const PART = "greeting-part:";
const partState = (i: number) => base64Encode(enc.encode(`${PART}${i}`));
function partOf(clientState: unknown): number | null {
  try {
    const m = new RegExp(`^${PART}(\\d+)$`).exec(new TextDecoder().decode(base64Decode(str(clientState))));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Speaks part `index` of the greeting, or hangs up once every part has been spoken (at once if there is none). */
async function speakPart(ctx: ConfigContext, env: ProviderEnv, id: string, greeting: () => Promise<string>, index: number): Promise<void> {
  const parts = speechChunks(speakable(await greeting()), TELNYX_MAX_SPEAK);
  if (index >= parts.length) {
    commandDone(await command(ctx, env, id, "hangup", { command_id: "greeting-hangup" }), "hangup");
    return;
  }
  // Gendered voices exist only at service_level basic (the default level, premium, names its voices
  // <Provider>.<Model>.<VoiceId>); basic speaks en-US plain text.
  const body = {
    payload: parts[index],
    voice: "female",
    language: "en-US",
    service_level: "basic",
    client_state: partState(index),
    command_id: `greeting-${index}`,
  };
  commandDone(await command(ctx, env, id, "speak", body), "speak");
}

/** The stream a voice agent's call gets, on dial and again on streaming_start: both ways, μ-law over RTP framing. */
export const streamParams = (streamUrl: string) => ({
  stream_url: streamUrl,
  stream_track: "inbound_track",
  stream_bidirectional_mode: "rtp",
  stream_bidirectional_codec: "PCMU",
});

export const telnyxCalls: ProviderCalls = {
  media: telnyxMedia,
  // GET /v2/balance: read-only, answers 401 when the API key is wrong.
  async verifyCredentials(ctx, env) {
    const res = await carrierFetch(`${telnyxApi(env)}/balance`, { method: "GET", headers: telnyxHeaders(ctx) }, env);
    return credentialsResult("Telnyx", res, telnyxErrorMessage(res.json));
  },
  async originate(ctx, env, req): Promise<OriginateResult> {
    const body = {
      connection_id: telnyxConnectionId(ctx),
      to: req.to,
      from: req.from ?? "",
      timeout_secs: req.timeoutSeconds ?? 30,
      webhook_url: req.statusUrl,
      webhook_url_method: "POST",
      client_state: base64Encode(enc.encode(`run:${req.runId}`)),
      // With a voice agent, the call's audio streams both ways from the answer on (μ-law over RTP framing).
      ...(req.liveMedia && req.streamUrl ? streamParams(req.streamUrl) : {}),
    };
    const res = await originateFetch(
      `${telnyxApi(env)}/calls`,
      { method: "POST", headers: telnyxHeaders(ctx), body: JSON.stringify(body) },
      env,
      callControlId,
    );
    const call = placed(res, callControlId);
    if (call) return call;
    const e = res.json?.errors?.[0];
    return refused("Telnyx", res, e ? [e.title, e.detail].filter(Boolean).join(": ") : null, e?.code);
  },

  async hangup(ctx, env, id) {
    const res = await command(ctx, env, id, "hangup", {});
    // 422 "already ended" (90018) and 404 count as done.
    if ((res.status >= 200 && res.status < 300) || res.status === 404 || res.status === 422) return;
    throw new Error(`Telnyx hang-up failed (HTTP ${res.status}): ${telnyxErrorMessage(res.json) ?? res.text}`);
  },

  // Ed25519 over the timestamp and the raw body.

  signsCallbackBody: true,

  maxSpeakChars: TELNYX_MAX_SPEAK,

  // Telnyx has no answer document; the greeting is spoken by a command (afterStatus).
  answerDocument() {
    return { body: "{}", contentType: "application/json" };
  },

  async verifyCallback(ctx, request, rawBody) {
    // Signing is verifiable only once the account's public key is configured (a non-blocking
    // checklist step); until then the per-run token in the URL is the only proof.
    const publicKey = str(ctx.config.webhook_public_key);
    if (!publicKey) return true;
    return verifyTelnyxSignature(publicKey, request.headers.get("telnyx-timestamp"), request.headers.get("telnyx-signature-ed25519"), rawBody);
  },

  replayKey(ctx, request) {
    const ts = request.headers.get("telnyx-timestamp");
    const sig = request.headers.get("telnyx-signature-ed25519");
    if (!str(ctx.config.webhook_public_key) || !ts || !sig) return null;
    // A verified signature covers `ts|body`, so (ts, signature) is the delivery; Telnyx's own retries carry a
    // new timestamp and meta.attempt. Re-encoded, so another base64 spelling of the same bytes is a repeat too.
    // Kept until the timestamp leaves the ±300 s window, after which verification refuses it anyway.
    return { scheme: "telnyx", nonce: `${ts}.${base64Encode(base64Decode(sig))}`, expiresAtMs: (Number(ts) + TELNYX_TOLERANCE_SECONDS + 1) * 1000 };
  },

  async parseStatus(_request, rawBody) {
    return mapTelnyx(jsonOrNull(rawBody));
  },

  // Telnyx reports a stream that ended while its call goes on (our socket dropped: a deploy) as streaming.stopped.
  streamStopped(rawBody) {
    const data = jsonOrNull(rawBody)?.data;
    const callId = data?.payload?.call_control_id;
    if (data?.event_type !== "streaming.stopped" || typeof callId !== "string") return null;
    return { callId, eventId: str(data.id) };
  },

  // A new stream on the same call, as on dial. The event's id as command_id: Telnyx ignores a repeated command_id on a
  // call, so its redelivery of the same streaming.stopped starts no second stream.
  async restartStream(ctx, env, stopped, streamUrl) {
    const body = { ...streamParams(streamUrl), ...(stopped.eventId ? { command_id: `resume-${stopped.eventId}` } : {}) };
    commandDone(await command(ctx, env, stopped.callId, "streaming_start", body), "streaming_start");
  },

  async afterStatus(ctx, env, rawBody, greeting) {
    const data = jsonOrNull(rawBody)?.data;
    const id = data?.payload?.call_control_id;
    if (typeof id !== "string") return;
    // Until the real-time agent exists: speak the greeting on answer, part after part, and hang up when it has been
    // spoken. A speak.ended we cannot place (no part index) ends the call too.
    if (data.event_type === "call.answered") {
      await speakPart(ctx, env, id, greeting, 0);
    } else if (data.event_type === "call.speak.ended") {
      const done = partOf(data.payload?.client_state);
      await speakPart(ctx, env, id, greeting, done === null ? Number.POSITIVE_INFINITY : done + 1);
    }
  },
};
