// Per-run callback tokens and the URLs handed to carriers. The token rides in the path (Twilio's stream
// URL takes no query, Vobiz signs the URL without it).
// - Answer and status: tok = hex(HMAC-SHA256(secret, provider + ":" + run_id)), stable for the run, since carriers
//   call status URLs many times and retry them.
// - Media stream: its own token per URL handed out, short-lived and spent by the first upgrade it opens (see
//   streamToken), so a stream URL read from a log or a carrier's console opens nothing later.
import type { ProviderName } from "../../telephony/providers/types";
import { hmac, randomBytes, safeEqual, toHex } from "../../lib/crypto";
import { clock } from "../../lib/clock";
import { publicUrl } from "../../lib/settings";

export type CallbackKind = "answer" | "status" | "stream";

/**
 * How long a stream URL opens a socket after it was minted. It must cover minting to the carrier connecting: Exotel
 * and Telnyx get it in the originate request, so queueing at the carrier and ringing count (edgedial asks for at most
 * 60 s of ringing; Telnyx accepts up to 600 s), while an answer document or Asterisk's external media connects
 * within seconds. 15 minutes covers the longest with room, and is short next to a log's retention.
 */
export const STREAM_TOKEN_TTL_SECONDS = 15 * 60;

export async function callbackToken(secret: string, provider: string, runId: number): Promise<string> {
  return toHex(await hmac(secret, `${provider}:${runId}`, "SHA-256"));
}

export async function verifyCallbackToken(secret: string, provider: string, runId: number, token: string): Promise<boolean> {
  if (!secret || !/^[0-9a-f]{64}$/.test(token)) return false;
  return safeEqual(await callbackToken(secret, provider, runId), token);
}

// `<expiry, unix s>.<nonce, 16 random bytes hex>.<hex HMAC-SHA256>`: digits, hex and dots only, so it is safe in a
// path segment, a query value and Asterisk's transport_data `v(...)` alike. The "stream:" prefix keeps its MAC apart
// from the answer/status token's.
const STREAM_TOKEN = /^(\d{1,12})\.([0-9a-f]{32})\.([0-9a-f]{64})$/;
const streamMac = async (secret: string, provider: string, runId: number, exp: string, nonce: string) =>
  toHex(await hmac(secret, `stream:${provider}:${runId}:${exp}:${nonce}`, "SHA-256"));

/** A fresh media stream token for the run: valid `ttlSeconds` (STREAM_TOKEN_TTL_SECONDS) from now, once. */
export async function streamToken(secret: string, provider: string, runId: number, ttlSeconds = STREAM_TOKEN_TTL_SECONDS): Promise<string> {
  const exp = String(Math.floor(clock.now() / 1000) + ttlSeconds);
  const nonce = toHex(randomBytes(16));
  return `${exp}.${nonce}.${await streamMac(secret, provider, runId, exp, nonce)}`;
}

export type StreamTokenCheck = { ok: true; nonce: string; expiresAtMs: number } | { ok: false; reason: "invalid" | "expired" };

/** Checks a stream token's MAC (for this provider and run) and its expiry; spending its nonce is the caller's. */
export async function readStreamToken(secret: string, provider: string, runId: number, token: string): Promise<StreamTokenCheck> {
  const m = STREAM_TOKEN.exec(token);
  if (!secret || !m) return { ok: false, reason: "invalid" };
  const [, exp, nonce, mac] = m;
  if (!safeEqual(await streamMac(secret, provider, runId, exp, nonce), mac)) return { ok: false, reason: "invalid" };
  const expiresAtMs = Number(exp) * 1000;
  if (clock.now() >= expiresAtMs) return { ok: false, reason: "expired" };
  return { ok: true, nonce, expiresAtMs };
}

export function callbackPath(provider: string, kind: CallbackKind, runId: number, token: string): string {
  return `/api/v1/telephony/${provider}/${kind}/${runId}/${token}`;
}

/**
 * The answer, status and media URLs of one run, absolute under the public base URL. Built with `publicUrl`, the
 * join the callback routes also rebuild the signed URL with, so what a carrier signs is what we check. Each call
 * mints a new stream token: a call that reconnects gets a URL of its own.
 */
export async function callbackUrls(secret: string, publicBaseUrl: string, provider: ProviderName, runId: number) {
  const token = await callbackToken(secret, provider, runId);
  const stream = await streamToken(secret, provider, runId);
  return {
    answerUrl: publicUrl(publicBaseUrl, callbackPath(provider, "answer", runId, token)),
    statusUrl: publicUrl(publicBaseUrl, callbackPath(provider, "status", runId, token)),
    streamUrl: publicUrl(publicBaseUrl, callbackPath(provider, "stream", runId, stream)).replace(/^http/, "ws"),
  };
}
