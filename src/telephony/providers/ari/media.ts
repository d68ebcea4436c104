// Asterisk's WebSocket channel driver (chan_websocket) behind ARI external media: binary frames carry the audio
// both ways, text frames carry JSON control (we ask for the JSON format with `f(json)`): MEDIA_START names the
// channel and codec, MARK_MEDIA is echoed as MEDIA_MARK_PROCESSED once the audio before it has played, FLUSH_MEDIA
// drops what Asterisk still holds. Asterisk re-frames and re-times what it is sent, so pacing is ours only to keep
// marks and barge-in exact.
import { jsonMessage } from "../../../lib/helpers";
import type { ConfigContext, MediaAdapter, MediaFormat, ProviderEnv } from "../types";
import { basicAuth, carrierFetch, str } from "../kit";
import { ariAuth, ariBase, ariEndpointRefusal } from "./calls";

/** chan_websocket's codec names for the formats we carry (the rate is the codec's own). */
const FORMATS: Record<string, MediaFormat> = {
  ulaw: { codec: "mulaw", rate: 8000 },
  alaw: { codec: "alaw", rate: 8000 },
  slin: { codec: "pcm16", rate: 8000 },
  slin16: { codec: "pcm16", rate: 16000 },
  slin24: { codec: "pcm16", rate: 24000 },
};

export const ariMedia: MediaAdapter = {
  format: FORMATS.ulaw,
  parse(data) {
    if (typeof data !== "string") return [{ kind: "audio", payload: new Uint8Array(data) }];
    const m = jsonMessage(data);
    switch (m?.event) {
      case "MEDIA_START": {
        const id = str(m.channel_id);
        return [{ kind: "start", streamId: id, callId: id, format: FORMATS[str(m.format)] ?? null }];
      }
      case "MEDIA_MARK_PROCESSED":
        return typeof m.correlation_id === "string" ? [{ kind: "mark", name: m.correlation_id }] : [];
      case "DTMF_END":
        return typeof m.digit === "string" ? [{ kind: "dtmf", digit: m.digit }] : [];
      default:
        return [];
    }
  },
  audio: (frame) => frame.slice().buffer,
  mark: (name) => JSON.stringify({ command: "MARK_MEDIA", correlation_id: name }),
  clear: () => JSON.stringify({ command: "FLUSH_MEDIA" }),
  // Asterisk closes the media socket when it hangs the media channel up; a restart of ours drops it on our side,
  // where the ARI events object sees the call still up and brings a new media channel.
  closeEndsCall: true,
};

/**
 * The bridge and external media channel of one run, named after its channel so any of the three finds the others:
 * an originated call's channel is ours (`edgedial-run-{run}-{rand}`), an incoming call's is Asterisk's own id, kept
 * whole after `-in-`.
 */
export function mediaIds(runChannelId: string): { bridgeId: string; mediaChannelId: string } {
  if (!runChannelId.startsWith("edgedial-run-")) return { bridgeId: `edgedial-bridge-in-${runChannelId}`, mediaChannelId: `edgedial-media-in-${runChannelId}` };
  return {
    bridgeId: runChannelId.replace(/^edgedial-run-/, "edgedial-bridge-"),
    mediaChannelId: runChannelId.replace(/^edgedial-run-/, "edgedial-media-"),
  };
}

/** The run channel an external media channel belongs to, or null when it is not ours. */
export function runChannelOfMedia(channelId: string): string | null {
  if (channelId.startsWith("edgedial-media-in-")) return channelId.slice("edgedial-media-in-".length) || null;
  return /^edgedial-media-\d+-/.test(channelId) ? channelId.replace(/^edgedial-media-/, "edgedial-run-") : null;
}

/**
 * Where the call session connects in server mode: the PBX's HTTP server, `/media/{connection id}` (an http(s) URL:
 * a Worker opens a WebSocket with fetch and an Upgrade header).
 */
export function mediaSocketUrl(ctx: ConfigContext, connectionId: string): string {
  return `${ariBase(ctx).replace(/\/ari$/, "")}/media/${encodeURIComponent(connectionId)}`;
}

type Step = { ok: true; json: any } | { ok: false; message: string };

async function ariPost(ctx: ConfigContext, env: ProviderEnv, path: string, method = "POST"): Promise<Step> {
  const refusal = ariEndpointRefusal(ctx);
  if (refusal) return { ok: false, message: refusal };
  const { user, password } = ariAuth(ctx);
  const res = await carrierFetch(`${ariBase(ctx)}${path}`, { method, headers: { Authorization: basicAuth(user, password), Accept: "application/json" } }, env);
  if ((res.status >= 200 && res.status < 300) || (method === "DELETE" && res.status === 404)) return { ok: true, json: res.json };
  return { ok: false, message: res.status === 0 ? res.text : `HTTP ${res.status}: ${res.json?.message ?? res.text.slice(0, 200)}` };
}

/** Client mode's run and stream token, which Asterisk dials us with; null for server mode. */
type MediaClient = { runId: number; token: string } | null;
/** The media channel asked for: the URL the session connects to (null in client mode), or why it failed. */
type MediaOpened = { ok: true; connectUrl: string | null } | { ok: false; message: string };

/**
 * Puts the answered channel in a bridge and asks for an external media channel on the WebSocket driver. The bridge
 * is a mixing bridge on the softmix technology (`video_sfu` selects it): softmix mixes on its own 20 ms clock, so
 * the session hears a continuous stream even while the far end sends nothing (the two-party simple bridge would
 * pass only what arrives, and the session's clock is the stream). With `ws_client_name` set Asterisk connects to
 * us (`connection_type=client`, that websocket_client.conf entry, the run and its token as URI parameters);
 * otherwise the session connects to Asterisk (`connection_type=server`), at the URL returned here.
 */
export async function startAriMedia(ctx: ConfigContext, env: ProviderEnv, runChannelId: string, client: MediaClient): Promise<MediaOpened> {
  const { bridgeId } = mediaIds(runChannelId);
  const bridge = await ariPost(ctx, env, `/bridges?${new URLSearchParams({ type: "mixing,video_sfu", bridgeId, name: bridgeId })}`);
  if (!bridge.ok) return { ok: false, message: `creating the bridge failed: ${bridge.message}` };
  const added = await ariPost(ctx, env, `/bridges/${encodeURIComponent(bridgeId)}/addChannel?channel=${encodeURIComponent(runChannelId)}`);
  if (!added.ok) return { ok: false, message: `bridging the call failed: ${added.message}` };
  return openAriMediaChannel(ctx, env, runChannelId, client);
}

/**
 * The call's external media channel on the WebSocket driver (it joins the bridge once it reaches the app): on answer,
 * and again when the call's media socket was lost while the call is up (a reset of the session), into the same bridge.
 * Server mode: the URL the session connects to; client mode: null (Asterisk dials us with the run and token).
 */
export async function openAriMediaChannel(ctx: ConfigContext, env: ProviderEnv, runChannelId: string, client: MediaClient): Promise<MediaOpened> {
  const { mediaChannelId } = mediaIds(runChannelId);
  const clientName = str(ctx.config.ws_client_name);
  const q = new URLSearchParams({
    app: str(ctx.config.app_name),
    channelId: mediaChannelId,
    external_host: client && clientName ? clientName : "INCOMING",
    format: "ulaw",
    transport: "websocket",
    encapsulation: "none",
    connection_type: client && clientName ? "client" : "server",
    direction: "both",
    transport_data: client && clientName ? `f(json)v(run_id=${client.runId},token=${client.token})` : "f(json)",
  });
  const media = await ariPost(ctx, env, `/channels/externalMedia?${q}`);
  if (!media.ok) return { ok: false, message: `external media failed: ${media.message}` };
  if (client && clientName) return { ok: true, connectUrl: null };
  const connectionId = str(media.json?.channelvars?.MEDIA_WEBSOCKET_CONNECTION_ID);
  if (!connectionId) return { ok: false, message: "external media answered without a connection id (is chan_websocket loaded?)" };
  return { ok: true, connectUrl: mediaSocketUrl(ctx, connectionId) };
}

/** The external media channel reached our application: it joins the call's bridge. */
export async function bridgeAriMedia(ctx: ConfigContext, env: ProviderEnv, mediaChannelId: string): Promise<Step> {
  const runChannelId = runChannelOfMedia(mediaChannelId);
  if (!runChannelId) return { ok: false, message: "not an edgedial media channel" };
  const { bridgeId } = mediaIds(runChannelId);
  return ariPost(ctx, env, `/bridges/${encodeURIComponent(bridgeId)}/addChannel?channel=${encodeURIComponent(mediaChannelId)}`);
}

/** The call's media channel goes (a missing one is fine): its socket was lost, and a new one replaces it. */
export async function dropAriMediaChannel(ctx: ConfigContext, env: ProviderEnv, runChannelId: string): Promise<void> {
  await ariPost(ctx, env, `/channels/${encodeURIComponent(mediaIds(runChannelId).mediaChannelId)}`, "DELETE");
}

/** The call is over: the bridge goes (a missing one is fine), and the media channel with it. */
export async function endAriMedia(ctx: ConfigContext, env: ProviderEnv, runChannelId: string): Promise<void> {
  const { bridgeId, mediaChannelId } = mediaIds(runChannelId);
  await ariPost(ctx, env, `/channels/${encodeURIComponent(mediaChannelId)}`, "DELETE");
  await ariPost(ctx, env, `/bridges/${encodeURIComponent(bridgeId)}`, "DELETE");
}
