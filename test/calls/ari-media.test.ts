// ARI external media, the requests edgedial makes of the PBX (against the simulator; the whole call against a real
// Asterisk is test/integration/ari-media.test.ts): a softmix bridge, the answered channel in it, a WebSocket media
// channel (server mode: the session connects to the PBX; client mode with ws_client_name: the PBX connects to us
// with the run and its token), the media channel bridged once it reaches the app, both gone when the call ends.
// And the chan_websocket protocol as the session reads and writes it.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callbackToken } from "../../src/calls/callbacks/callback-urls";
import { getDb } from "../../src/lib/db";
import { ariMedia, bridgeAriMedia, endAriMedia, mediaIds, mediaSocketUrl, startAriMedia } from "../../src/telephony/providers/ari/media";
import type { ConfigContext } from "../../src/telephony/providers/types";
import { providerEnvOf } from "../../src/telephony/provisioning";
import { loadConfigContext } from "../../src/telephony/resolve";
import { getConfig } from "../../src/telephony/store";
import { SIM, runRow, setup, simRequests, startCall, type Setup } from "./support";

async function answeredCall(extra: Record<string, unknown> = {}) {
  const s = await setup("ari", extra);
  const runId = await startCall(s);
  const channelId = (await runRow(runId)).providerCallId!;
  const ctx = await loadConfigContext(env, await getConfig(getDb(env), s.org.id, s.configId));
  return { s, runId, channelId, ctx };
}

/** The requests after `from`, as method, path below the account and query. */
async function requestsSince(s: Setup, from: number) {
  return (await simRequests(s.acct)).slice(from).map((r) => ({
    method: r.method,
    path: r.path.replace(`/${s.acct.id}/ari`, ""),
    query: Object.fromEntries(Object.entries(r.query).map(([k, v]) => [k, v[0]])),
  }));
}

describe("ARI external media requests", () => {
  it("server mode: bridge, the call in it, a WebSocket media channel the session connects to; bridged on arrival; removed at the end", async () => {
    const { s, runId, channelId, ctx } = await answeredCall();
    const { bridgeId, mediaChannelId } = mediaIds(channelId);
    expect(bridgeId).toBe(channelId.replace("edgedial-run-", "edgedial-bridge-"));
    expect(mediaChannelId).toMatch(new RegExp(`^edgedial-media-${runId}-[0-9a-f]{8}$`));
    const from = (await simRequests(s.acct)).length;

    const started = await startAriMedia(ctx, providerEnvOf(env), channelId, null);
    expect(started).toEqual({ ok: true, connectUrl: expect.stringMatching(new RegExp(`^${SIM}/ari/${s.acct.id}/media/[0-9a-f-]{36}$`)) });
    expect(await requestsSince(s, from)).toEqual([
      { method: "POST", path: "/bridges", query: { type: "mixing,video_sfu", bridgeId, name: bridgeId } },
      { method: "POST", path: `/bridges/${bridgeId}/addChannel`, query: { channel: channelId } },
      {
        method: "POST",
        path: "/channels/externalMedia",
        query: {
          app: s.acct.credentials.app_name,
          channelId: mediaChannelId,
          external_host: "INCOMING",
          format: "ulaw",
          transport: "websocket",
          encapsulation: "none",
          connection_type: "server",
          direction: "both",
          transport_data: "f(json)",
        },
      },
    ]);

    const mid = (await simRequests(s.acct)).length;
    expect(await bridgeAriMedia(ctx, providerEnvOf(env), mediaChannelId)).toMatchObject({ ok: true });
    await endAriMedia(ctx, providerEnvOf(env), channelId);
    expect(await requestsSince(s, mid)).toEqual([
      { method: "POST", path: `/bridges/${bridgeId}/addChannel`, query: { channel: mediaChannelId } },
      { method: "DELETE", path: `/channels/${mediaChannelId}`, query: {} },
      { method: "DELETE", path: `/bridges/${bridgeId}`, query: {} },
    ]);
    // Ending twice is fine (the media channel and bridge are already gone: 404s are not errors).
    await expect(endAriMedia(ctx, providerEnvOf(env), channelId)).resolves.toBeUndefined();
    // A channel that is not one of our media channels is never bridged.
    expect(await bridgeAriMedia(ctx, providerEnvOf(env), "1761245643.1")).toEqual({ ok: false, message: "not an edgedial media channel" });
  });

  it("client mode (ws_client_name): Asterisk dials that connection with the run and its per-run token as URI parameters", async () => {
    const { s, runId, channelId, ctx } = await answeredCall({ ws_client_name: "edgedial_media" });
    const from = (await simRequests(s.acct)).length;
    const token = await callbackToken(env.CALLBACK_SECRET, "ari", runId);
    expect(await startAriMedia(ctx, providerEnvOf(env), channelId, { runId, token })).toEqual({ ok: true, connectUrl: null });
    const media = (await requestsSince(s, from)).find((r) => r.path === "/channels/externalMedia")!;
    expect(media.query).toMatchObject({
      external_host: "edgedial_media",
      connection_type: "client",
      transport_data: `f(json)v(run_id=${runId},token=${token})`,
    });
  });

  it("a PBX that refuses a step: the step and the PBX's reason in the message", async () => {
    const { channelId, ctx } = await answeredCall();
    const other = { ...ctx, config: { ...ctx.config, app_password: "wrong" } } as ConfigContext;
    const res = await startAriMedia(other, providerEnvOf(env), channelId, null);
    expect(res).toEqual({ ok: false, message: "creating the bridge failed: HTTP 401: Authentication required" });
  });

  it("the media socket is on the PBX's HTTP server, without the ARI path or credentials", () => {
    const at = (ari_endpoint: string) => mediaSocketUrl({ config: { ari_endpoint } } as unknown as ConfigContext, "c0ffee");
    expect(at("http://pbx.example.com:8088")).toBe("http://pbx.example.com:8088/media/c0ffee");
    expect(at("https://user:secret@pbx.example.com/ari/")).toBe("https://pbx.example.com/media/c0ffee");
    expect(at("http://10.0.0.5:8088/asterisk/ari")).toBe("http://10.0.0.5:8088/asterisk/media/c0ffee");
  });
});

describe("chan_websocket's protocol (JSON control)", () => {
  it("reads MEDIA_START with its codec, played marks, DTMF and binary audio; ignores the rest", () => {
    const start = (format: string) => JSON.stringify({ event: "MEDIA_START", channel_id: "edgedial-media-7-aa", format, optimal_frame_size: 160, ptime: 20 });
    expect(ariMedia.parse(start("ulaw"))).toEqual([
      { kind: "start", streamId: "edgedial-media-7-aa", callId: "edgedial-media-7-aa", format: { codec: "mulaw", rate: 8000 } },
    ]);
    expect(ariMedia.parse(start("slin16"))[0]).toMatchObject({ format: { codec: "pcm16", rate: 16000 } });
    expect(ariMedia.parse(start("alaw"))[0]).toMatchObject({ format: { codec: "alaw", rate: 8000 } });
    expect(ariMedia.parse(start("opus"))[0]).toMatchObject({ format: null });
    expect(ariMedia.parse(JSON.stringify({ event: "MEDIA_MARK_PROCESSED", channel_id: "x", correlation_id: "greeting-end" }))).toEqual([
      { kind: "mark", name: "greeting-end" },
    ]);
    expect(ariMedia.parse(JSON.stringify({ event: "DTMF_END", channel_id: "x", digit: "5", duration_ms: 120 }))).toEqual([{ kind: "dtmf", digit: "5" }]);
    expect(ariMedia.parse(new Uint8Array([1, 2, 3]).buffer)).toEqual([{ kind: "audio", payload: new Uint8Array([1, 2, 3]) }]);
    for (const other of [JSON.stringify({ event: "STATUS", queue_length: 0 }), "MEDIA_START connection_id:x", "{", "[]"])
      expect(ariMedia.parse(other)).toEqual([]);
  });

  it("writes audio as binary frames, marks as MARK_MEDIA and clear as FLUSH_MEDIA", () => {
    const frame = new Uint8Array([0xff, 0x7f, 0x00]);
    expect(new Uint8Array(ariMedia.audio(frame, "s") as ArrayBuffer)).toEqual(frame);
    expect(JSON.parse(ariMedia.mark!("greeting-end", "s"))).toEqual({ command: "MARK_MEDIA", correlation_id: "greeting-end" });
    expect(JSON.parse(ariMedia.clear!("s"))).toEqual({ command: "FLUSH_MEDIA" });
  });
});
