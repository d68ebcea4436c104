// Call recordings: short-lived signed download URLs (the Worker serves the file, so no bucket is public), and the
// stored raw PCM turned into a WAV on the way out.
import { hmac, safeEqual, toHex } from "../lib/crypto";
import { publicUrl } from "../lib/settings";

/** How long a recording URL in a run's details stays valid. */
export const RECORDING_URL_TTL_SECONDS = 15 * 60;

const signature = async (secret: string, runId: number, expires: number) => toHex(await hmac(secret, `recording:${runId}:${expires}`));

export async function recordingUrl(secret: string, publicBaseUrl: string, runId: number, nowMs: number): Promise<string> {
  const expires = Math.floor(nowMs / 1000) + RECORDING_URL_TTL_SECONDS;
  const sig = await signature(secret, runId, expires);
  return publicUrl(publicBaseUrl, `/api/v1/recordings/${runId}?expires=${expires}&signature=${sig}`);
}

/** Whether a download URL's signature is ours and not yet expired. */
export async function recordingUrlValid(secret: string, runId: number, expires: number, sig: string, nowMs: number): Promise<boolean> {
  if (!secret || !/^[0-9a-f]{64}$/.test(sig) || expires * 1000 < nowMs) return false;
  return safeEqual(await signature(secret, runId, expires), sig);
}
