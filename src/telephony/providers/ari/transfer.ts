// Asterisk (ARI) hand-over of a live call to a person. The caller's channel already sits in a mixing bridge with
// edgedial's external media channel; the person's channel is originated into our Stasis app (it enters the app when it
// answers), then added to that bridge and the external media channel hung up: edgedial leaves, caller and person stay.
// Cold bridges at once on answer; warm first plays the whisper to the person's channel only
// (`POST /channels/{id}/play`, an http(s) media URI Asterisk fetches through its media cache) and bridges on
// PlaybackFinished. Until the person answers the caller stays with the agent. The events arrive on the configuration's
// events socket (src/calls/ari/ari-transfer.ts drives them); these are the PBX requests.
import type { ConfigContext, ProviderEnv, TransferLeg, TransferResult } from "../types";
import { basicAuth, carrierFetch, str } from "../kit";
import { ariAuth, ariBase, ariEndpointRefusal, dialString } from "./calls";
import { mediaIds } from "./media";

/** The person's channel: ours, named after the run, so its early events are placed before the originate answers. */
export function transferChannelId(runId: number): string {
  const rand = [...crypto.getRandomValues(new Uint8Array(4))].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `edgedial-xfer-${runId}-${rand}`;
}

/** The run a person's channel was originated for, or null when the channel is not one of ours. */
export function runIdOfTransferChannel(channelId: string): number | null {
  const m = /^edgedial-xfer-(\d+)-[0-9a-f]+$/.exec(channelId);
  return m ? Number(m[1]) : null;
}

/** The whisper's playback on the person's channel: its id names the channel, so PlaybackFinished finds it. */
export const whisperPlaybackId = (transferChannelId: string) => transferChannelId.replace(/^edgedial-xfer-/, "edgedial-whisper-");
export const channelOfWhisper = (playbackId: string): string | null =>
  /^edgedial-whisper-\d+-[0-9a-f]+$/.test(playbackId) ? playbackId.replace(/^edgedial-whisper-/, "edgedial-xfer-") : null;

type Step = { ok: true; json: any } | { ok: false; message: string };

async function ari(ctx: ConfigContext, env: ProviderEnv, path: string, method = "POST"): Promise<Step> {
  const refusal = ariEndpointRefusal(ctx);
  if (refusal) return { ok: false, message: refusal };
  const { user, password } = ariAuth(ctx);
  const res = await carrierFetch(`${ariBase(ctx)}${path}`, { method, headers: { Authorization: basicAuth(user, password), Accept: "application/json" } }, env);
  if ((res.status >= 200 && res.status < 300) || (method === "DELETE" && res.status === 404)) return { ok: true, json: res.json };
  return { ok: false, message: res.status === 0 ? "Could not reach the PBX" : `HTTP ${res.status}: ${res.json?.message ?? res.text.slice(0, 200)}` };
}
const id = (s: string) => encodeURIComponent(s);

/** The originate of the person's channel (both modes): the dial template applied, into our app, named for the run. */
export function transferOriginateQuery(ctx: ConfigContext, leg: TransferLeg, channelId: string): URLSearchParams {
  const q = new URLSearchParams({
    endpoint: dialString(str(ctx.config.dial_string_template), leg.to),
    app: str(ctx.config.app_name),
    appArgs: `transfer=${leg.runId},mode=${leg.mode}`,
    channelId,
    timeout: String(Math.max(1, Math.round(leg.timeoutSeconds))),
  });
  if (leg.from) q.set("callerId", leg.from);
  return q;
}

async function dialPerson(ctx: ConfigContext, env: ProviderEnv, leg: TransferLeg): Promise<TransferResult> {
  const channelId = transferChannelId(leg.runId);
  const res = await ari(ctx, env, `/channels?${transferOriginateQuery(ctx, leg, channelId)}`);
  return res.ok ? { ok: true, legId: channelId, ringing: true } : { ok: false, message: `Asterisk refused the person's channel: ${res.message}` };
}

/** Plays the whisper to the person's channel alone; false when there is no audio to play (ARI has no text-to-speech). */
export async function playWhisper(ctx: ConfigContext, env: ProviderEnv, channelId: string, url: string | null): Promise<Step | null> {
  if (!url) return null;
  const q = new URLSearchParams({ media: `sound:${url}`, playbackId: whisperPlaybackId(channelId) });
  return ari(ctx, env, `/channels/${id(channelId)}/play?${q}`);
}

/** The person joins the caller's bridge (edgedial's external media channel then leaves it, dropAriMediaChannel). */
export async function bridgePerson(ctx: ConfigContext, env: ProviderEnv, runChannelId: string, channelId: string): Promise<Step> {
  const added = await ari(ctx, env, `/bridges/${id(mediaIds(runChannelId).bridgeId)}/addChannel?channel=${id(channelId)}`);
  return added.ok ? added : { ok: false, message: `adding the person to the call's bridge failed: ${added.message}` };
}

/** Hangs a channel up (a missing one is fine): the caller left alone in a bridge, or a person nobody is waiting for. */
export async function hangupChannel(ctx: ConfigContext, env: ProviderEnv, channelId: string): Promise<void> {
  await ari(ctx, env, `/channels/${id(channelId)}`, "DELETE");
}

/** The channels in the run's bridge now (none when it is gone), for ending a transferred call on both sides. */
export async function bridgeChannels(ctx: ConfigContext, env: ProviderEnv, runChannelId: string): Promise<string[]> {
  const res = await ari(ctx, env, `/bridges/${id(mediaIds(runChannelId).bridgeId)}`, "GET");
  return res.ok && Array.isArray(res.json?.channels) ? res.json.channels.map(String) : [];
}

export const ariTransfer = { cold: dialPerson, warm: dialPerson };
