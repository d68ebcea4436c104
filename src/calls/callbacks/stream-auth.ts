// What a carrier's media socket upgrade must prove before it reaches the call session: a stream token that is this
// run's and unexpired, the carrier's signature where the carrier signs the upgrade, and that the token was not spent
// by an earlier upgrade (a stream URL read from a log or a console opens nothing).
import { ApiError } from "../../lib/errors";
import { claimNonce, releaseNonce } from "../../telephony/nonces";
import type { ConfigContext, ProviderCalls, ReplayKey } from "../../telephony/providers/types";
import { readStreamToken } from "./callback-urls";

/**
 * Carriers that sign the media socket's upgrade as they sign their callbacks (carriers.md): Twilio, with
 * X-Twilio-Signature over the stream URL. Cloudonix speaks Twilio's stream protocol but documents no signature;
 * Exotel's upgrade carries only userinfo we would have put in the URL ourselves; the others sign nothing there.
 */
export const SIGNED_UPGRADE: ReadonlySet<string> = new Set(["twilio"]);

/** The stream token's once-only key (401 when it is forged, another run's or expired). */
export async function checkStreamToken(secret: string, provider: string, runId: number, token: string): Promise<ReplayKey> {
  const check = await readStreamToken(secret, provider, runId, token);
  if (!check.ok) throw new ApiError(401, check.reason === "expired" ? "This stream URL has expired" : "Invalid stream token");
  return { scheme: "stream", nonce: check.nonce, expiresAtMs: check.expiresAtMs };
}

/**
 * The upgrade's signature where its carrier signs one (403 otherwise), over the URL the carrier was handed: wss:// as
 * the answer document wrote it (Twilio signs the URL its WebSocket client requested), or the https:// form, should a
 * proxy or a compatible carrier sign that. `publicHttpUrl` is the request's URL rebuilt on the public origin.
 */
export async function requireSignedUpgrade(provider: string, calls: ProviderCalls, ctx: ConfigContext, publicHttpUrl: string, headers: Headers): Promise<void> {
  if (!SIGNED_UPGRADE.has(provider)) return;
  for (const url of [publicHttpUrl.replace(/^http/, "ws"), publicHttpUrl]) {
    if (await calls.verifyCallback(ctx, new Request(url, { headers }), "")) return;
  }
  throw new ApiError(403, "Invalid signature");
}

/**
 * Spends the token before the session sees the socket, so two upgrades racing on one URL cannot both get through
 * (403 for the later). The returned function gives it back, for an upgrade the session did not take.
 */
export async function spendStreamToken(env: Env, configId: number, key: ReplayKey): Promise<() => Promise<void>> {
  if (!(await claimNonce(env, configId, key))) throw new ApiError(403, "This stream URL was already used");
  return () => releaseNonce(env, configId, key);
}
