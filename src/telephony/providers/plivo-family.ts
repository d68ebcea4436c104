// The part Plivo and Vobiz (a Plivo-compatible carrier) share: the config table and checklist, the
// originate body and call resources, the CallStatus/hang-up-cause mapping, the XML answer document and
// application provisioning. What differs stays in each carrier's folder: the API
// base URL, the auth headers and the callback signature scheme.
import type { CallStatus, ConfigContext, OriginateRequest, OriginateResult, ProviderCalls, ProviderEnv, StatusUpdate } from "./types";
import { applicationStep, callerIdStep, credentialsStep, isSet } from "./checklist";
import { defineConfig, optionalId, secret, text, type Shape } from "./define";
import {
  carrierFetch,
  credentialsResult,
  digits,
  formFields,
  intOrNull,
  isMachine,
  originateFetch,
  placed,
  refused,
  speakThenHangupXml,
  str,
  xmlEscape,
} from "./kit";
import { applicationName, inboundUrl, provisioningError } from "./provision-kit";
import { plivoFamilyMedia } from "./plivo-family-media";

/** One Plivo-family carrier: what its folder supplies to the shared code. */
export type PlivoFamilyCarrier = {
  name: "plivo" | "vobiz";
  /** For error messages ("Plivo hang-up failed …"). */
  label: string;
  /** `…/Account/{auth_id}` on the carrier's API (no trailing slash). */
  accountUrl(ctx: ConfigContext, env: ProviderEnv): string;
  /** Auth and content headers of every API request. */
  headers(ctx: ConfigContext): Record<string, string>;
  /** Plivo's V3 signature covers the body; Vobiz signs only the URL and nonce. */
  signsCallbackBody: boolean;
};

export const familyCreds = (ctx: ConfigContext) => ({ id: str(ctx.config.auth_id), token: str(ctx.config.auth_token) });

// ---- configuration ----

export function familyDefinition(name: PlivoFamilyCarrier["name"], desc: { authId: string; authToken: string; authIdShape?: Shape }) {
  return defineConfig(name, {
    auth_id: text(desc.authId, { required: true, max: 64, ...(desc.authIdShape ? { shape: desc.authIdShape } : {}) }),
    auth_token: secret(desc.authToken, { required: true }),
    application_id: optionalId(
      "Voice application id; its answer URL is updated when inbound workflows are attached. When omitted, an application is created on save and its id stored.",
    ),
  });
}

export function familySteps(ctx: ConfigContext) {
  return [
    credentialsStep(ctx.state.credentials_error),
    callerIdStep(ctx.activeNumbers.length, true),
    applicationStep(isSet(ctx.config.application_id), "application_id", ctx.state.application_error),
  ];
}

// ---- calls ----

export function originateBody(req: OriginateRequest) {
  return {
    from: digits(req.from ?? ""),
    to: digits(req.to),
    answer_url: req.answerUrl,
    answer_method: "POST",
    ring_url: req.statusUrl,
    ring_method: "POST",
    hangup_url: req.statusUrl,
    hangup_method: "POST",
    ring_timeout: req.timeoutSeconds ?? 60,
  };
}

/** Hang-up causes that decide the outcome on their own; others defer to CallStatus. */
function byCauseCode(code: number): CallStatus | null {
  if (code === 1000) return "canceled";
  if (code === 1010 || code === 1020) return "failed";
  if (code >= 2000 && code <= 2070) return "failed";
  if ([4000, 4010, 4020, 4030].includes(code)) return "completed";
  return null;
}

const STATUS: Record<string, CallStatus> = {
  ringing: "ringing",
  "in-progress": "in_progress",
  completed: "completed",
  busy: "busy",
  "no-answer": "no_answer",
  cancel: "canceled",
  timeout: "failed",
  failed: "failed",
};

/** Maps one Plivo-family callback (ring, answer, hangup) to a normalized update; Vobiz uses Plivo's table. */
export function mapPlivo(p: Record<string, string>): StatusUpdate | null {
  let status = STATUS[(p.CallStatus ?? "").toLowerCase()];
  if (!status) return null;
  const code = intOrNull(p.HangupCauseCode);
  if (status !== "ringing" && status !== "in_progress" && code !== null && code !== 0) status = byCauseCode(code) ?? status;
  if (/rejected/i.test(p.HangupCauseName ?? "") && status !== "completed") status = "declined";
  const answeredBy = p.AnsweredBy || p.MachineDetected || (p.Machine === "true" ? "machine" : "");
  if (status === "completed" && isMachine(answeredBy)) status = "voicemail";
  const update: StatusUpdate = { status };
  if (p.CallUUID) update.providerCallId = p.CallUUID;
  if (p.RequestUUID) update.requestId = p.RequestUUID;
  if (answeredBy) update.answeredBy = answeredBy;
  const duration = intOrNull(p.Duration);
  if (duration !== null && status !== "ringing" && status !== "in_progress") update.durationSeconds = duration;
  if (status === "failed" && (p.HangupCause || p.HangupCauseName)) update.error = `Call failed: ${p.HangupCauseName || p.HangupCause}`;
  return update;
}

/** Form first; the JSON variant some Plivo-compatible carriers post is accepted too. */
export function plivoFields(request: Request, rawBody: string): Record<string, string> {
  const type = request.headers.get("content-type") ?? "";
  if (type.includes("application/json")) {
    try {
      const obj = JSON.parse(rawBody) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, str(v)]));
    } catch {
      return {};
    }
  }
  return Object.fromEntries(formFields(rawBody));
}

/** Plivo documents no `<Speak>` limit (unconfirmed; Vobiz follows Plivo): 3,000, the Polly limit its TTS stands on. */
export const PLIVO_MAX_SPEAK = 3000;

export function plivoXml(text: string): { body: string; contentType: string } {
  return { body: speakThenHangupXml("Speak", text, PLIVO_MAX_SPEAK), contentType: "application/xml" };
}

/**
 * A bidirectional μ-law stream that holds the call until our socket closes (keepCallAlive: the elements after it run
 * only once the stream disconnects). A `<Redirect>` to `resumeUrl` after it brings a call whose socket dropped back
 * for a new stream; a call we end is hung up through the API first.
 */
export function plivoStreamXml(streamUrl: string, resumeUrl?: string): { body: string; contentType: string } {
  const stream = `<Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000">${xmlEscape(streamUrl)}</Stream>`;
  const resume = resumeUrl ? `<Redirect method="POST">${xmlEscape(resumeUrl)}</Redirect>` : "";
  return { body: `<?xml version="1.0" encoding="UTF-8"?><Response>${stream}${resume}</Response>`, contentType: "application/xml" };
}

/**
 * How long a Plivo-family nonce is remembered. These signatures carry no time, so there is no validity window
 * to follow: a day outlives any call (max_call_seconds) and the carriers' callback retries, and a replay later
 * than that can only reach a run that has long been final (a final status is never overwritten).
 */
export const FAMILY_NONCE_RETENTION_MS = 24 * 3600 * 1000;

/** The call's id in the answer to Call/: its request_uuid (a list of one, or one). */
const requestUuid = (json: any) => (Array.isArray(json?.request_uuid) ? json.request_uuid[0] : json?.request_uuid);

/** The calls module of a Plivo-family carrier; only the signature check (and its nonce) is the carrier's own. */
export function familyCalls(
  carrier: PlivoFamilyCarrier,
  verifyCallback: ProviderCalls["verifyCallback"],
  replayKey: ProviderCalls["replayKey"],
): ProviderCalls {
  return {
    media: plivoFamilyMedia,
    mediaDocument: plivoStreamXml,
    // GET the account resource (`…/Account/{auth_id}/`): read-only, 401 on a wrong auth id or token.
    async verifyCredentials(ctx, env) {
      const res = await carrierFetch(`${carrier.accountUrl(ctx, env)}/`, { method: "GET", headers: carrier.headers(ctx) }, env);
      return credentialsResult(carrier.label, res, res.json?.error ?? res.json?.message);
    },
    async originate(ctx, env, req): Promise<OriginateResult> {
      const res = await originateFetch(
        `${carrier.accountUrl(ctx, env)}/Call/`,
        {
          method: "POST",
          headers: carrier.headers(ctx),
          body: JSON.stringify(originateBody(req)),
        },
        env,
        requestUuid,
      );
      // The request uuid stands in until the ring callback brings the CallUUID (correlated on RequestUUID).
      return placed(res, requestUuid) ?? refused(carrier.label, res, res.json?.error ?? res.json?.message);
    },

    async hangup(ctx, env, id) {
      // Before the CallUUID is known only the request can be cancelled (…/Request/{uuid}/) (unconfirmed for Vobiz).
      for (const kind of ["Call", "Request"]) {
        const res = await carrierFetch(
          `${carrier.accountUrl(ctx, env)}/${kind}/${encodeURIComponent(id)}/`,
          { method: "DELETE", headers: carrier.headers(ctx) },
          env,
        );
        if (res.status >= 200 && res.status < 300) return;
        if (res.status !== 404) throw new Error(`${carrier.label} hang-up failed (HTTP ${res.status}): ${res.json?.error ?? res.text}`);
      }
    },

    maxSpeakChars: PLIVO_MAX_SPEAK,

    answerDocument: plivoXml,

    verifyCallback,

    signsCallbackBody: carrier.signsCallbackBody,

    replayKey,

    async parseStatus(request, rawBody) {
      const u = mapPlivo(plivoFields(request, rawBody));
      return u ? [u] : [];
    },
  };
}

// ---- provisioning ----

/** Creates (or finds) the application of a configuration saved without application_id (Vobiz keeps Plivo's Application resource). */
export function familyProvision(carrier: PlivoFamilyCarrier) {
  return async (ctx: ConfigContext, env: ProviderEnv) => {
    if (str(ctx.config.application_id)) return { state: {} };
    const name = applicationName(ctx);
    const base = `${carrier.accountUrl(ctx, env)}/Application/`;
    const found = await carrierFetch(`${base}?${new URLSearchParams({ app_name: name })}`, { method: "GET", headers: carrier.headers(ctx) }, env);
    const existing = found.status === 200 ? (found.json?.objects ?? []).find((a: any) => a?.app_name === name) : null;
    if (existing?.app_id) return { state: {}, config: { application_id: String(existing.app_id) } };
    const url = inboundUrl(env, carrier.name);
    const res = await carrierFetch(
      base,
      {
        method: "POST",
        headers: carrier.headers(ctx),
        body: JSON.stringify({ app_name: name, answer_url: url, answer_method: "POST", hangup_url: url, hangup_method: "POST" }),
      },
      env,
    );
    if (res.status >= 200 && res.status < 300 && res.json?.app_id) return { state: {}, config: { application_id: String(res.json.app_id) } };
    throw provisioningError(carrier.label, res, res.json?.error);
  };
}
