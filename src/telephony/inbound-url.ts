// The URL a carrier is pointed at for calls to a configuration's numbers. It names the configuration and carries an
// unguessable token (an HMAC under the callback secret), like every callback URL edgedial hands a carrier: Cloudonix,
// Exotel, Vonage's answer GET and Telnyx without a public key sign nothing, so the token is what proves them; where
// the carrier signs, its signature is checked as well. The configuration in the path also scopes the number lookup
// (two organizations may hold the same number).
import { hmac, safeEqual, toHex } from "../lib/crypto";
import { publicUrl } from "../lib/settings";
import type { ProviderName } from "./providers/types";

export async function inboundToken(secret: string, provider: string, configId: number): Promise<string> {
  return toHex(await hmac(secret, `inbound:${provider}:${configId}`, "SHA-256"));
}

export async function verifyInboundToken(secret: string, provider: string, configId: number, token: string): Promise<boolean> {
  if (!secret || !/^[0-9a-f]{64}$/.test(token)) return false;
  return safeEqual(await inboundToken(secret, provider, configId), token);
}

/**
 * The inbound URL of one configuration, absolute under the public base URL. Exotel's is a WebSocket URL (its
 * Voicebot applet takes a wss:// URL and opens it once the call is answered; no request comes before).
 */
export async function inboundUrlFor(secret: string, publicBaseUrl: string, provider: ProviderName, configId: number): Promise<string> {
  const token = await inboundToken(secret, provider, configId);
  if (provider === "exotel") return publicUrl(publicBaseUrl, `/api/v1/telephony/exotel/inbound-stream/${configId}/${token}`).replace(/^http/, "ws");
  return publicUrl(publicBaseUrl, `/api/v1/telephony/${provider}/inbound/${configId}/${token}`);
}
