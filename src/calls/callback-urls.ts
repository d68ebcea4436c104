// Per-run callback tokens and the URLs handed to carriers. The token rides in the path (Twilio's stream
// URL takes no query, Vobiz signs the URL without it): tok = hex(HMAC-SHA256(secret, provider + ":" + run_id)).
import type { ProviderName } from "../telephony/providers/types";
import { hmac, safeEqual, toHex } from "../lib/crypto";
import { publicUrl } from "../lib/settings";

export type CallbackKind = "answer" | "status" | "stream";

export async function callbackToken(secret: string, provider: string, runId: number): Promise<string> {
  return toHex(await hmac(secret, `${provider}:${runId}`, "SHA-256"));
}

export async function verifyCallbackToken(secret: string, provider: string, runId: number, token: string): Promise<boolean> {
  if (!secret || !/^[0-9a-f]{64}$/.test(token)) return false;
  return safeEqual(await callbackToken(secret, provider, runId), token);
}

export function callbackPath(provider: string, kind: CallbackKind, runId: number, token: string): string {
  return `/api/v1/telephony/${provider}/${kind}/${runId}/${token}`;
}

/**
 * The answer, status and media URLs of one run, absolute under the public base URL. Built with `publicUrl`, the
 * join the callback routes also rebuild the signed URL with, so what a carrier signs is what we check.
 */
export async function callbackUrls(secret: string, publicBaseUrl: string, provider: ProviderName, runId: number) {
  const token = await callbackToken(secret, provider, runId);
  return {
    answerUrl: publicUrl(publicBaseUrl, callbackPath(provider, "answer", runId, token)),
    statusUrl: publicUrl(publicBaseUrl, callbackPath(provider, "status", runId, token)),
    streamUrl: publicUrl(publicBaseUrl, callbackPath(provider, "stream", runId, token)).replace(/^http/, "ws"),
  };
}
