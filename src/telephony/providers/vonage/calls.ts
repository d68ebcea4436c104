// Vonage Voice API v1: RS256 application JWT per request, NCCO answer document,
// optional HS256-signed callbacks carrying a SHA-256 `payload_hash` of the raw body.
import type { CallStatus, ConfigContext, OriginateResult, ProviderCalls, ProviderEnv, StatusUpdate } from "../types";
import { compactVerify, SignJWT, type JWTPayload } from "jose";
import { base64Decode, safeEqual, sha256Hex } from "../../../lib/crypto";
import { clock } from "../../../lib/clock";
import { speechChunks } from "../../../lib/speech";
import { baseUrl, carrierFetch, credentialsResult, digits, intOrNull, jsonOrNull, originateFetch, placed, refused, speakable, str } from "../kit";
import { vonageMedia } from "./media";

export const VONAGE_API = "https://api.nexmo.com";
/** An NCCO talk action's `text` takes at most 1,500 characters. */
export const VONAGE_MAX_TALK = 1500;
export const VONAGE_JWT_TTL_SECONDS = 900;
export const VONAGE_CALLBACK_MAX_AGE_SECONDS = 300;
/** Leeway for `exp`/`nbf` on signed callbacks: clocks differ a little, never minutes. */
export const VONAGE_CLOCK_SKEW_SECONDS = 60;

// --- RS256 application JWT -------------------------------------------------------------------

function derLength(n: number): number[] {
  if (n < 0x80) return [n];
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return [0x80 | bytes.length, ...bytes];
}
const der = (tag: number, body: Uint8Array) => Uint8Array.from([tag, ...derLength(body.length), ...body]);

/** Wraps a PKCS#1 RSAPrivateKey in a PKCS#8 PrivateKeyInfo (WebCrypto imports only the latter). */
export function pkcs1ToPkcs8(pkcs1: Uint8Array): Uint8Array {
  const version = Uint8Array.from([0x02, 0x01, 0x00]);
  // SEQUENCE { OID 1.2.840.113549.1.1.1 (rsaEncryption), NULL }
  const algorithm = Uint8Array.from([0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00]);
  const key = der(0x04, pkcs1);
  return der(0x30, Uint8Array.from([...version, ...algorithm, ...key]));
}

export async function importVonagePrivateKey(pem: string): Promise<CryptoKey> {
  const isPkcs1 = /BEGIN RSA PRIVATE KEY/.test(pem);
  const body = pem
    .replace(/-----(BEGIN|END)[^-]+-----/g, "")
    .replace(/\\n/g, "")
    .replace(/\s+/g, "");
  const bytes = base64Decode(body);
  return crypto.subtle.importKey("pkcs8", isPkcs1 ? pkcs1ToPkcs8(bytes) : bytes, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
}

/** A fresh application JWT (iat, jti, exp, application_id), minted per request. */
export async function vonageJwt(applicationId: string, privateKeyPem: string, nowMs = clock.now()): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  const key = await importVonagePrivateKey(privateKeyPem);
  return new SignJWT({ application_id: applicationId })
    .setProtectedHeader({ alg: "RS256", typ: "JWT" })
    .setIssuedAt(iat)
    .setJti(crypto.randomUUID())
    .setExpirationTime(iat + VONAGE_JWT_TTL_SECONDS)
    .sign(key);
}

// --- signed callbacks (HS256) -----------------------------------------------------------------

/** Verifies a signed callback: HS256 signature, api_key, payload_hash of the raw body, iat freshness, exp/nbf when present. */
export async function verifyVonageSignedCallback(opts: {
  authorization: string | null;
  rawBody: string;
  secret: string;
  apiKey: string;
  nowMs?: number;
}): Promise<boolean> {
  const m = /^Bearer\s+([\w-]+\.[\w-]+\.[\w-]+)$/i.exec(opts.authorization?.trim() ?? "");
  if (!m) return false;
  let claims: JWTPayload;
  try {
    // jose checks the signature (HS256 only); the claim rules below are Vonage's, with our tolerances.
    const { payload } = await compactVerify(m[1], new TextEncoder().encode(opts.secret), { algorithms: ["HS256"] });
    claims = JSON.parse(new TextDecoder().decode(payload));
  } catch {
    return false;
  }
  if (claims?.api_key !== opts.apiKey) return false;
  if (opts.rawBody !== "" || claims.payload_hash !== undefined) {
    if (typeof claims.payload_hash !== "string" || !safeEqual(claims.payload_hash.toLowerCase(), await sha256Hex(opts.rawBody))) return false;
  }
  const now = (opts.nowMs ?? clock.now()) / 1000;
  if (typeof claims.iat !== "number" || Math.abs(now - claims.iat) > VONAGE_CALLBACK_MAX_AGE_SECONDS) return false;
  // Vonage documents only iat, but a token that states its own lifetime is held to it (a replay after expiry).
  if (claims.exp !== undefined && (typeof claims.exp !== "number" || now > claims.exp + VONAGE_CLOCK_SKEW_SECONDS)) return false;
  if (claims.nbf !== undefined && (typeof claims.nbf !== "number" || claims.nbf > now + VONAGE_CLOCK_SKEW_SECONDS)) return false;
  if (claims.iss !== undefined && claims.iss !== "Vonage") return false;
  return true;
}

// --- status mapping ---------------------------------------------------------------------------

const STATUS: Record<string, CallStatus> = {
  started: "initiated",
  ringing: "ringing",
  answered: "in_progress",
  human: "in_progress",
  machine: "voicemail",
  completed: "completed",
  busy: "busy",
  timeout: "no_answer",
  unanswered: "no_answer",
  rejected: "declined",
  cancelled: "canceled",
  failed: "failed",
};

export function mapVonage(e: any): StatusUpdate | null {
  const raw = str(e?.status);
  const status = STATUS[raw];
  if (!status) return null; // e.g. `disconnected` comes from a WebSocket leg, not the call
  const u: StatusUpdate = { status, providerCallId: str(e.uuid) || undefined };
  if (raw === "human" || raw === "machine") u.answeredBy = raw;
  const duration = intOrNull(e.duration);
  if (duration !== null) u.durationSeconds = duration;
  if (status === "failed" || status === "declined") u.error = e.detail ? `Call ${raw}: ${e.detail}` : null;
  if (typeof e.timestamp === "string" && Number.isFinite(Date.parse(e.timestamp))) u.at = new Date(Date.parse(e.timestamp)).toISOString();
  return u;
}

// --- the module -------------------------------------------------------------------------------

/** The shortest NCCO that says nothing and ends the call: a talk action of SSML silence. */
export const VONAGE_SILENCE = "<speak><break time='100ms'/></speak>";
/** The websocket leg's events that fall back to the answer's NCCO: the socket dropped, or could not be opened. */
const RESUME_EVENTS = new Set(["disconnected", "failed", "unanswered"]);

const auth = async (ctx: ConfigContext) => `Bearer ${await vonageJwt(str(ctx.config.application_id), str(ctx.config.private_key))}`;
const callsUrl = (env: ProviderEnv) => `${baseUrl(env, "vonage", VONAGE_API)}/v1/calls`;
/** The application's JWT and the calls collection, for the carrier's other commands (DTMF). */
export { auth as vonageAuth, callsUrl as vonageCallsUrl };

export function problemMessage(json: any): string | null {
  if (!json) return null;
  const parts = [json.title, json.detail].filter(Boolean);
  if (Array.isArray(json.invalid_parameters)) {
    for (const p of json.invalid_parameters) parts.push(`${p.name}: ${p.reason}`);
  }
  return parts.length ? parts.join(": ") : null;
}

export const vonageCalls: ProviderCalls = {
  media: vonageMedia,
  // GET /v1/calls?page_size=1 with the application JWT: read-only, and it proves what calls need (the application
  // id and its private key); 401 when either is wrong.
  async verifyCredentials(ctx, env) {
    let authorization: string;
    try {
      authorization = await auth(ctx);
    } catch {
      return { ok: false, message: "Vonage private_key could not be read as an RSA private key (PEM, PKCS#8 or PKCS#1)" };
    }
    const res = await carrierFetch(
      `${callsUrl(env)}?page_size=1`,
      { method: "GET", headers: { Authorization: authorization, Accept: "application/json" } },
      env,
    );
    return credentialsResult("Vonage", res, problemMessage(res.json));
  },
  async originate(ctx, env, req): Promise<OriginateResult> {
    try {
      await importVonagePrivateKey(str(ctx.config.private_key));
    } catch {
      return { ok: false, message: "The Vonage private key could not be read (expected a PEM RSA private key)" };
    }
    const body = {
      to: [{ type: "phone", number: digits(req.to) }],
      from: { type: "phone", number: digits(req.from ?? "") },
      answer_url: [req.answerUrl],
      answer_method: "GET",
      event_url: [req.statusUrl],
      event_method: "POST",
      ringing_timer: req.timeoutSeconds ?? 60,
    };
    // A fresh JWT (new jti, iat) for every attempt.
    const callIdOf = (json: any) => json?.uuid;
    const res = await originateFetch(
      callsUrl(env),
      async () => ({
        method: "POST",
        headers: { Authorization: await auth(ctx), "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify(body),
      }),
      env,
      callIdOf,
    );
    return placed(res, callIdOf) ?? refused("Vonage", res, problemMessage(res.json), res.json?.code);
  },

  async hangup(ctx, env, uuid) {
    const res = await carrierFetch(
      `${callsUrl(env)}/${encodeURIComponent(uuid)}`,
      {
        method: "PUT",
        headers: { Authorization: await auth(ctx), "Content-Type": "application/json" },
        body: JSON.stringify({ action: "hangup" }),
      },
      env,
    );
    // 400/404 after the call has ended count as success.
    if ((res.status >= 200 && res.status < 300) || res.status === 400 || res.status === 404) return;
    throw new Error(`Vonage hang-up failed (HTTP ${res.status}): ${problemMessage(res.json) ?? res.text}`);
  },

  // The JWT carries the body's SHA-256 (payload_hash).

  signsCallbackBody: true,

  maxSpeakChars: VONAGE_MAX_TALK,

  answerDocument(text) {
    // The call ends when the last action ends: talking is the whole call. An NCCO needs at least one action (the NCCO
    // schema's minItems), and `wait` is none, so with nothing to say it talks a tenth of a second of SSML silence.
    const talks = speechChunks(speakable(text), VONAGE_MAX_TALK).map((part) => ({ action: "talk", text: part }));
    return { body: JSON.stringify(talks.length ? talks : [{ action: "talk", text: VONAGE_SILENCE }]), contentType: "application/json" };
  },

  // The call lasts as long as the connect action: until our socket closes. With `eventType: synchronous`, Vonage
  // posts the websocket leg's events to `eventUrl`, `disconnected` among them when the socket drops, and runs the NCCO
  // that request answers with (a call we end is hung up through the API first, so it sends none).
  mediaDocument: (streamUrl, resumeUrl) => ({
    body: JSON.stringify([
      {
        action: "connect",
        ...(resumeUrl ? { eventType: "synchronous", eventUrl: [resumeUrl], eventMethod: "POST" } : {}),
        endpoint: [{ type: "websocket", uri: streamUrl, "content-type": "audio/l16;rate=16000", headers: {} }],
      },
    ]),
    contentType: "application/json",
  }),

  // The leg's socket dropped, or could not be (re)opened: the answer is the call's next NCCO. Its other events are not.
  resumeRequested: (rawBody) => RESUME_EVENTS.has(str(jsonOrNull(rawBody)?.status)),

  async verifyCallback(ctx, request, rawBody) {
    const secret = str(ctx.config.signature_secret);
    // Signed callbacks are opt-in (a non-blocking checklist step), and the answer GET is not assured
    // to be signed: those rest on the per-run token alone.
    if (!secret || request.method === "GET") return true;
    return verifyVonageSignedCallback({ authorization: request.headers.get("authorization"), rawBody, secret, apiKey: str(ctx.config.api_key) });
  },

  replayKey(ctx, request) {
    if (!str(ctx.config.signature_secret) || request.method === "GET") return null;
    const token = /^Bearer\s+([\w-]+)\.([\w-]+)\.([\w-]+)$/i.exec(request.headers.get("authorization")?.trim() ?? "");
    if (!token) return null;
    let claims: any;
    try {
      claims = JSON.parse(new TextDecoder().decode(base64Decode(token[2])));
    } catch {
      return null;
    }
    if (typeof claims?.iat !== "number") return null;
    // The JWT id, else the token's own signature; kept until iat leaves the freshness window verification applies.
    const nonce = typeof claims.jti === "string" && claims.jti ? `jti:${claims.jti}` : `sig:${token[3]}`;
    return { scheme: "vonage-jti", nonce, expiresAtMs: (claims.iat + VONAGE_CALLBACK_MAX_AGE_SECONDS + 1) * 1000 };
  },

  async parseStatus(request, rawBody) {
    if (request.method === "GET") {
      // The answer request: `uuid` in the query, and the call is answered.
      const uuid = new URL(request.url).searchParams.get("uuid");
      return [{ status: "in_progress", providerCallId: uuid || undefined }];
    }
    const u = mapVonage(jsonOrNull(rawBody));
    return u ? [u] : [];
  },
};
