// Calls that outlive their media socket. Every deploy resets Durable Objects and drops their WebSockets, so a live
// call's carrier socket can drop while the call itself goes on. Each carrier then comes back through its own
// documented mechanism (TwiML/CXML and Plivo XML: the verb after the stream, a <Redirect> to the resume URL; Vonage:
// the connect action's synchronous `disconnected` event; Telnyx: streaming.stopped, answered with streaming_start),
// and gets a new stream into the same call session, which goes on from its stored state. A call that cannot go on
// gets a document that hangs it up. (Asterisk reconnects from the ARI events object, src/calls/ari/ari-events.ts.)
import { publicUrl } from "../../lib/settings";
import { log } from "../../lib/log";
import type { ConfigContext, ProviderCalls, ProviderName } from "../../telephony/providers/types";
import { providerEnvOf } from "../../telephony/provisioning";
import { callbackToken, callbackUrls } from "../callbacks/callback-urls";
import { isFinal, type RunRow } from "../runs/runs";
import type { MediaState } from "../session/protocol";
import { callSessionStub } from "../session/stub";

/** States in which the session takes a new media connection and the conversation goes on. */
export const resumable = (state: MediaState): boolean => state === "live" || state === "lost";

/** Where a carrier asks for the next document once the call's stream ended: the per-run token, as the answer URL. */
export async function resumeUrl(secret: string, publicBaseUrl: string, provider: ProviderName, runId: number): Promise<string> {
  return publicUrl(publicBaseUrl, `/api/v1/telephony/${provider}/resume/${runId}/${await callbackToken(secret, provider, runId)}`);
}

/** The run's media state; a final run, or a session that cannot be asked, is not resumed. */
export async function mediaStateOf(env: Env, run: RunRow): Promise<MediaState> {
  if (isFinal(run.status)) return "ended";
  try {
    return await callSessionStub(env, run.id).mediaState();
  } catch (err) {
    log("error", "media_state_unavailable", { run_id: run.id, error: String(err) });
    return "ended";
  }
}

/** The document that connects the call's audio to its session: a fresh stream URL, and where to come back to. */
export async function mediaDocumentFor(env: Env, requestUrl: string, calls: ProviderCalls, provider: ProviderName, runId: number) {
  const base = providerEnvOf(env, requestUrl).publicBaseUrl;
  const { streamUrl } = await callbackUrls(env.CALLBACK_SECRET, base, provider, runId);
  return calls.mediaDocument!(streamUrl, await resumeUrl(env.CALLBACK_SECRET, base, provider, runId));
}

/**
 * The carrier's request for what follows the stream: the media document again while the session can take the call
 * back, else the carrier's document that hangs up (its answer document with nothing to say). Null: the request asks
 * for nothing (a Vonage leg event other than a drop), and the running document goes on.
 */
export async function resumeDocument(env: Env, requestUrl: string, calls: ProviderCalls, provider: ProviderName, run: RunRow, rawBody: string) {
  if (!calls.mediaDocument || (calls.resumeRequested && !calls.resumeRequested(rawBody))) return null;
  const state = await mediaStateOf(env, run);
  log(resumable(state) ? "info" : "warning", "media_resume_requested", { run_id: run.id, provider, media_state: state });
  if (resumable(state)) return mediaDocumentFor(env, requestUrl, calls, provider, run.id);
  return calls.answerDocument("");
}

/**
 * A verified status event on the media path: where it says the carrier's stream stopped while the session can take
 * the call back (Telnyx), a new stream is started. A failure is logged: the session ends a call whose media does not
 * come back, so nothing is left open.
 */
export async function restartStoppedStream(
  env: Env,
  requestUrl: string,
  ctx: ConfigContext,
  calls: ProviderCalls,
  provider: ProviderName,
  run: RunRow,
  rawBody: string,
) {
  const stopped = calls.streamStopped?.(rawBody);
  if (!stopped || !calls.restartStream) return;
  const state = await mediaStateOf(env, run);
  log(resumable(state) ? "info" : "warning", "media_stream_stopped", { run_id: run.id, provider, media_state: state });
  if (!resumable(state)) return;
  const providerEnv = providerEnvOf(env, requestUrl);
  try {
    const { streamUrl } = await callbackUrls(env.CALLBACK_SECRET, providerEnv.publicBaseUrl, provider, run.id);
    await calls.restartStream(ctx, providerEnv, stopped, streamUrl);
  } catch (err) {
    log("error", "media_restart_failed", { run_id: run.id, provider, error: String((err as Error)?.message ?? err) });
  }
}
