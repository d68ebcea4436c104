// Asterisk ARI: originate with query parameters and our own channel id, outcomes
// from the events WebSocket (held by the ARI Durable Object), Q.850 causes mapped to outcomes.
import { pbxUrlRefusal } from "../pbx-urls";
import { ariLifecycle } from "./lifecycle";
import type { CallStatus, ConfigContext, OriginateResult, ProviderCalls, ProviderEnv, StatusUpdate } from "../types";
import { basicAuth, carrierFetch, credentialsResult, originateFetch, refused, str, type CarrierResponse } from "../kit";
import { log } from "../../../lib/log";

export const DEFAULT_DIAL_TEMPLATE = "PJSIP/{number}";
export const ARI_RING_SECONDS = 30;

/**
 * The ARI user: userinfo on `ari_endpoint` when given (an ari.conf user that differs from the
 * app), else the app name, as ari.conf is conventionally written for one app.
 */
export function ariAuth(ctx: ConfigContext): { user: string; password: string } {
  const u = safeUrl(str(ctx.config.ari_endpoint));
  const user = u?.username ? decodeURIComponent(u.username) : str(ctx.config.app_name);
  const password = u?.password ? decodeURIComponent(u.password) : str(ctx.config.app_password);
  return { user, password };
}

function safeUrl(s: string): URL | null {
  try {
    return new URL(s);
  } catch {
    return null;
  }
}

/** `{ari_endpoint}/ari` without userinfo, whether or not the configured endpoint already ends in /ari. */
export function ariBase(ctx: ConfigContext): string {
  const u = safeUrl(str(ctx.config.ari_endpoint));
  if (!u) return str(ctx.config.ari_endpoint).replace(/\/+$/, "");
  u.username = "";
  u.password = "";
  const path = u.pathname.replace(/\/+$/, "");
  return `${u.origin}${path.endsWith("/ari") ? path : `${path}/ari`}`;
}

/**
 * The endpoint is checked again at every fetch, not only on save (SSRF): the organization may have turned
 * `allow_private_pbx` off since. Literal addresses only: a Worker cannot resolve a name to see where it points.
 */
export function ariEndpointRefusal(ctx: ConfigContext): string | null {
  const msg = pbxUrlRefusal(str(ctx.config.ari_endpoint), ctx.allowPrivatePbx === true, null);
  return msg ? `ari_endpoint refused: ${msg}` : null;
}

const ALREADY_DIAL_STRING = /^[A-Za-z][A-Za-z0-9]*\/\S+$/;

/** Applies `dial_string_template` (default `PJSIP/{number}`); a dial string passes unchanged. */
export function dialString(template: string | undefined | null, number: string): string {
  if (ALREADY_DIAL_STRING.test(number)) return number;
  const t = template?.includes("{number}") ? template : DEFAULT_DIAL_TEMPLATE;
  return t.split("{number}").join(number);
}

/** Our channel id: events can arrive before the originate reply, so we choose it and embed the run. */
export function ariChannelId(runId: number): string {
  const rand = [...crypto.getRandomValues(new Uint8Array(4))].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `edgedial-run-${runId}-${rand}`;
}

export function runIdOfChannel(channelId: string): number | null {
  const m = /^edgedial-run-(\d+)-/.exec(channelId);
  return m ? Number(m[1]) : null;
}

/** What the events socket has seen of one channel, enough to map its end. */
export type AriChannelState = { answered: boolean; hungUpByUs: boolean; dialStatus?: string | null };

const CONGESTION = new Set([27, 34, 38, 41, 42, 58, 127]);
const UNROUTABLE = new Set([1, 3, 22, 28]);

const DIAL_STATUS: Record<string, CallStatus> = {
  BUSY: "busy",
  NOANSWER: "no_answer",
  CANCEL: "canceled",
  CONGESTION: "failed",
  CHANUNAVAIL: "failed",
};

/** Q.850 cause of ChannelDestroyed -> outcome (the hang-up cause table). */
export function mapQ850(cause: number, s: AriChannelState): CallStatus {
  if (s.answered) return "completed";
  if (cause === 16) return s.hungUpByUs ? "canceled" : "no_answer";
  if (cause === 17) return "busy";
  if (cause === 18 || cause === 19 || cause === 20) return "no_answer";
  if (cause === 21) return "declined";
  if (UNROUTABLE.has(cause) || CONGESTION.has(cause) || cause === 31) return "failed";
  if (cause === 0) {
    if (s.hungUpByUs) return "canceled";
    // A busy Local/ target reports cause 0; the Dial event's dialstatus says what happened.
    return (s.dialStatus && DIAL_STATUS[s.dialStatus]) || "failed";
  }
  return "failed";
}

/** Maps one ARI event for a channel we track; updates `s` in place (answered, dial status). */
export function mapAriEvent(ev: any, s: AriChannelState): StatusUpdate | null {
  const at = typeof ev?.timestamp === "string" && Number.isFinite(Date.parse(ev.timestamp)) ? new Date(Date.parse(ev.timestamp)).toISOString() : undefined;
  const id = str(ev?.channel?.id) || str(ev?.peer?.id);
  switch (ev?.type) {
    case "ChannelStateChange": {
      const state = str(ev.channel?.state);
      if (state === "Ringing" || state === "Ring") return { status: "ringing", providerCallId: id, at };
      if (state === "Up") {
        s.answered = true;
        return { status: "in_progress", providerCallId: id, at };
      }
      return null;
    }
    case "StasisStart":
      s.answered = true;
      return { status: "in_progress", providerCallId: id, at };
    case "Dial":
      if (ev.dialstatus) s.dialStatus = str(ev.dialstatus);
      if (ev.dialstatus === "ANSWER") s.answered = true;
      return null;
    case "ChannelDestroyed": {
      const cause = Number(ev.cause ?? 0);
      const status = mapQ850(Number.isFinite(cause) ? cause : 0, s);
      const u: StatusUpdate = { status, providerCallId: id, at };
      if (status === "failed") u.error = `Call failed: Q.850 cause ${cause}${ev.cause_txt ? ` (${ev.cause_txt})` : ""}`;
      return u;
    }
    default:
      return null;
  }
}

/**
 * The endpoint is the client's own host, so whether a port answered, refused or stayed silent (a timeout) is not
 * theirs to learn (SSRF probing): every network failure is one message; the details are logged.
 */
export const PBX_UNREACHABLE = "Could not reach the PBX";
function unreachable(msg: string, ids: Record<string, unknown>, res: CarrierResponse): { ok: false; message: string } {
  log("error", "pbx_unreachable", { msg, ...ids, error: res.text });
  return { ok: false, message: PBX_UNREACHABLE };
}

/**
 * Whether the PBX still has a channel (GET /channels/{id}): true, false once it is gone (404), null when the PBX
 * could not say. Used after the events socket was down, to learn which calls ended unseen.
 */
export async function ariChannelAlive(ctx: ConfigContext, env: ProviderEnv, id: string): Promise<boolean | null> {
  if (ariEndpointRefusal(ctx)) return null;
  const { user, password } = ariAuth(ctx);
  const res = await carrierFetch(
    `${ariBase(ctx)}/channels/${encodeURIComponent(id)}`,
    { method: "GET", headers: { Authorization: basicAuth(user, password), Accept: "application/json" } },
    env,
  );
  if (res.status >= 200 && res.status < 300) return true;
  return res.status === 404 ? false : null;
}

export const ariCalls: ProviderCalls = {
  lifecycle: ariLifecycle,

  // GET /ari/asterisk/info: read-only, 401 when the ARI user or password is wrong.
  async verifyCredentials(ctx, env) {
    const refusal = ariEndpointRefusal(ctx);
    if (refusal) return { ok: false, message: refusal };
    const { user, password } = ariAuth(ctx);
    const res = await carrierFetch(
      `${ariBase(ctx)}/asterisk/info`,
      { method: "GET", headers: { Authorization: basicAuth(user, password), Accept: "application/json" } },
      env,
    );
    if (res.status === 0) return unreachable("ARI verify unreachable", { config_id: ctx.id }, res);
    return credentialsResult("Asterisk ARI", res, res.json?.message ?? res.json?.error);
  },
  async originate(ctx, env, req): Promise<OriginateResult> {
    const refusal = ariEndpointRefusal(ctx);
    if (refusal) return { ok: false, message: refusal };
    const { user, password } = ariAuth(ctx);
    const channelId = ariChannelId(req.runId);
    const q = new URLSearchParams({
      endpoint: dialString(str(ctx.config.dial_string_template), req.to),
      app: str(ctx.config.app_name),
      appArgs: `run=${req.runId}`,
      channelId,
      timeout: String(req.timeoutSeconds ?? ARI_RING_SECONDS),
    });
    if (req.from) q.set("callerId", req.from);
    const res = await originateFetch(
      `${ariBase(ctx)}/channels?${q}`,
      {
        method: "POST",
        headers: { Authorization: basicAuth(user, password), Accept: "application/json" },
      },
      env,
      (json) => json?.id,
    );
    if (res.status >= 200 && res.status < 300) return { ok: true, providerCallId: typeof res.json?.id === "string" ? res.json.id : channelId };
    if (res.status === 0) return unreachable("ARI originate unreachable", { config_id: ctx.id, run_id: req.runId }, res);
    return refused("Asterisk ARI", res, res.json?.message ?? res.json?.error);
  },

  async hangup(ctx, env, id) {
    const refusal = ariEndpointRefusal(ctx);
    if (refusal) throw new Error(refusal);
    const { user, password } = ariAuth(ctx);
    const res = await carrierFetch(
      `${ariBase(ctx)}/channels/${encodeURIComponent(id)}`,
      { method: "DELETE", headers: { Authorization: basicAuth(user, password) } },
      env,
    );
    if ((res.status >= 200 && res.status < 300) || res.status === 404) return;
    throw new Error(`ARI hang-up failed (HTTP ${res.status}): ${res.json?.message ?? res.text}`);
  },

  // No text-to-speech in ARI (media goes through externalMedia).
  // No HTTP callbacks at all (events come over our own socket).
  signsCallbackBody: false,

  maxSpeakChars: null,

  // ARI has no answer document; the events socket drives the call.
  answerDocument() {
    return { body: "{}", contentType: "application/json" };
  },

  // Outcomes arrive over a socket we opened with our credentials, never as HTTP callbacks.
  async verifyCallback() {
    return false;
  },

  async parseStatus() {
    return [];
  },
};
