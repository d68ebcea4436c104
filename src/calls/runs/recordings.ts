// Call recordings: short-lived signed download URLs (the Worker serves the file, so no bucket is public), and the
// stored raw PCM turned into a WAV on the way out; runs as the API shows them, with their links.
import { clock } from "../../lib/clock";
import { hmac, safeEqual, toHex } from "../../lib/crypto";
import { publicBaseUrl } from "../../lib/deployment";
import { toPage } from "../../lib/pagination";
import { publicUrl } from "../../lib/settings";
import { withCampaignCallIds } from "./campaign-call-ids";
import { migrateRun, withDetails } from "./run-details";
import { type RunRow, runListView, runView } from "./runs";

/** How long a recording URL in a run's details stays valid. */
export const RECORDING_URL_TTL_SECONDS = 15 * 60;

const signature = async (secret: string, runId: number, expires: number) => toHex(await hmac(secret, `recording:${runId}:${expires}`));

export async function recordingUrl(
  secret: string,
  publicBaseUrl: string,
  runId: number,
  nowMs: number,
  ttlSeconds = RECORDING_URL_TTL_SECONDS,
): Promise<string> {
  const expires = Math.floor(nowMs / 1000) + ttlSeconds;
  const sig = await signature(secret, runId, expires);
  return publicUrl(publicBaseUrl, `/api/v1/recordings/${runId}?expires=${expires}&signature=${sig}`);
}

/** Whether a download URL's signature is ours and not yet expired. */
export async function recordingUrlValid(secret: string, runId: number, expires: number, sig: string, nowMs: number): Promise<boolean> {
  if (!secret || !/^[0-9a-f]{64}$/.test(sig) || expires * 1000 < nowMs) return false;
  return safeEqual(await signature(secret, runId, expires), sig);
}

/** A run's recording link, signed for this deployment's public origin (the request's when none is set). */
export function recordingLink(env: Env, requestUrl: string, runId: number, ttlSeconds = RECORDING_URL_TTL_SECONDS): Promise<string> {
  return recordingUrl(env.CALLBACK_SECRET, publicBaseUrl(env, requestUrl) || new URL(requestUrl).origin, runId, clock.now(), ttlSeconds);
}

/**
 * A page of runs as lists show them (of `limit + 1` rows read, the last only says there are more), with links: D1's
 * fields only, never the details objects.
 */
export async function runsPage(env: Env, requestUrl: string, rows: RunRow[], limit: number) {
  const shown = await withCampaignCallIds(env, rows.slice(0, limit));
  const links = new Map<number, string>();
  for (const r of shown) if (r.recordingKey) links.set(r.id, await recordingLink(env, requestUrl, r.id));
  return toPage([...shown, ...rows.slice(limit)], limit, (r) => runListView(r, links.get(r.id) ?? null));
}

/** One run as the API shows it, its bulk read from its details object (an old row's is moved there on the way). */
export async function runDetails(env: Env, requestUrl: string, row: RunRow) {
  const [shown] = await withCampaignCallIds(env, [row]);
  // Moved just now: the old row has the bulk in hand, no need to read the object back.
  const full = (await migrateRun(env, shown)) !== shown ? shown : await withDetails(env, shown);
  return runView(full, row.recordingKey ? await recordingLink(env, requestUrl, row.id) : null);
}
