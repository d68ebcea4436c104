// The simulated Asterisk's playback on a channel (POST /ari/channels/{id}/play), as ARI documents it: 201 with the
// Playback, then PlaybackStarted and PlaybackFinished on the application's events socket. Media URIs are checked for
// the documented schemes (sound:, recording:, number:, digits:, characters:, tone:); `sound:` may name an http(s) URL,
// which Asterisk fetches through its media cache. What was played is kept on the channel for tests to read.
import { json, randomHex, type Account, type SimCall } from "../types";

const MEDIA = /^(sound|recording|number|digits|characters|tone):\S+$/;

export function playOnChannel(account: Account, call: SimCall, q: URLSearchParams, send: (events: unknown[]) => void): Response {
  const media = q.getAll("media").flatMap((m) => m.split(","));
  if (!media.length) return json(400, { message: "media parameter not specified" });
  const bad = media.find((m) => !MEDIA.test(m));
  if (bad) return json(400, { message: `Invalid media URI ${bad}` });
  const id = q.get("playbackId") ?? `${Date.now()}.${randomHex(3)}`;
  const playback = { id, media_uri: media[0], target_uri: `channel:${call.id}`, language: "en", state: "queued" };
  call.extra.played = [...((call.extra.played as string[]) ?? []), ...media];
  const at = () => new Date().toISOString();
  const app = account.credentials.app_name;
  // Played at once: the events follow the answer, as Asterisk's do.
  setTimeout(
    () =>
      send([
        { type: "PlaybackStarted", timestamp: at(), application: app, playback: { ...playback, state: "playing" } },
        { type: "PlaybackFinished", timestamp: at(), application: app, playback: { ...playback, state: "done" } },
      ]),
    5,
  );
  return json(201, playback);
}
