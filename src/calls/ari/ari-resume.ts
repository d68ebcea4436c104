// Asterisk's side of a call that outlives its media socket (src/calls/resume/resume.ts has the carriers'). When the call
// session restarts (a deploy), its socket to chan_websocket drops and Asterisk hangs the external media channel up, while
// the call's own channel stays up in its bridge. The ARI events object sees that (the media channel destroyed, or a
// session reporting its media lost on the object's heartbeat) and asks for a new external media channel into the same
// bridge; the session connects to it (server mode), or Asterisk dials our stream route with a fresh token (client mode).
import { getDb } from "../../lib/db";
import { log } from "../../lib/log";
import { ariChannelAlive } from "../../telephony/providers/ari/calls";
import { dropAriMediaChannel, openAriMediaChannel } from "../../telephony/providers/ari/media";
import { str } from "../../telephony/providers/kit";
import type { ConfigContext } from "../../telephony/providers/types";
import { providerEnvOf } from "../../telephony/provisioning";
import { streamToken } from "../callbacks/callback-urls";
import { mediaStateOf, resumable } from "../resume/resume";
import type { MediaState } from "../session/protocol";
import { getRun } from "../runs/runs";
import { sessionStart } from "../start/session-start";
import { callSessionStub } from "../session/stub";

/**
 * Gives the run's call a new external media channel when its session can take the call back (`when`: the media
 * states that ask for one) and its channel is still up at the PBX. True when one was asked for.
 */
export async function reconnectAriMedia(
  env: Env,
  ctx: ConfigContext,
  runId: number,
  runChannelId: string,
  when: (state: MediaState) => boolean = resumable,
): Promise<boolean> {
  const run = await getRun(getDb(env), runId);
  if (!run) return false;
  const state = await mediaStateOf(env, run);
  if (!when(state)) return false;
  const providerEnv = providerEnvOf(env);
  // A call that ended at the PBX is not reconnected (its end reaches the session through the events socket).
  if ((await ariChannelAlive(ctx, providerEnv, runChannelId)) !== true) return false;
  log("info", "ari_media_reconnect", { run_id: runId, media_state: state });
  // The lost channel may still be there (the session's reset seen before Asterisk's): it goes first, its id is reused.
  await dropAriMediaChannel(ctx, providerEnv, runChannelId);
  const client = str(ctx.config.ws_client_name) ? { runId, token: await streamToken(env.CALLBACK_SECRET, "ari", runId) } : null;
  const opened = await openAriMediaChannel(ctx, providerEnv, runChannelId, client);
  if (!opened.ok) {
    // The session hangs the call up once its grace runs out: nothing is left open.
    log("error", "ari_media_reconnect_failed", { run_id: runId, error: opened.message });
    return false;
  }
  if (opened.connectUrl) {
    const connected = await callSessionStub(env, runId).connectTo(opened.connectUrl, await sessionStart(env, run, "ari"));
    if (!connected.ok) log("error", "ari_media_reconnect_failed", { run_id: runId, error: connected.error });
  }
  return true;
}
