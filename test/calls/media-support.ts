// Connecting to a run's media socket as its carrier would: a stream URL as edgedial mints them (a fresh, single-use
// stream token each time), the upgrade (signed with X-Twilio-Signature as Twilio signs it, by Twilio's own SDK), and a
// simulated callee on the accepted socket; and the Worker with a voice agent on the media path.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import twilio from "twilio";
import { CALLEE_PROTOCOLS, type CalleeOptions, CalleeStream, type MediaProvider } from "../../src/dev/simulator/media/callee";
import { streamToken } from "../../src/calls/callbacks/callback-urls";
import { callSessionStub } from "../../src/calls/session/stub";
import worker from "../../src/index";
import { getDb } from "../../src/lib/db";
import { loadConfigContext } from "../../src/telephony/resolve";
import { getConfig } from "../../src/telephony/store";
import type { ProviderName } from "../../src/telephony/providers/types";
import { runRow, setup, startCall } from "./support";

/** A stream URL of the run (http: the upgrade request's scheme), with `token` or a freshly minted one. */
export async function mediaUrl(provider: string, runId: number, token?: string) {
  const t = token ?? (await streamToken(env.CALLBACK_SECRET, provider, runId));
  // Asterisk dials one fixed websocket_client.conf URI with the run and token appended as parameters.
  if (provider === "ari") return `http://edgedial.test/api/v1/telephony/ari/stream?run_id=${runId}&token=${t}`;
  return `http://edgedial.test/api/v1/telephony/${provider}/stream/${runId}/${t}`;
}

/** The auth token of the run's Twilio configuration: what Twilio signs its requests with. */
export async function twilioAuthToken(runId: number): Promise<string> {
  const run = await runRow(runId);
  const ctx = await loadConfigContext(env, await getConfig(getDb(env), run.orgId, run.telephonyConfigurationId!));
  return String(ctx.config.auth_token);
}

/** Twilio's X-Twilio-Signature for an upgrade to `url` (the ws:// URL its answer document named), by Twilio's SDK. */
export async function twilioUpgradeSignature(runId: number, url: string): Promise<string> {
  return twilio.getExpectedTwilioSignature(await twilioAuthToken(runId), url.replace(/^http/, "ws"), {});
}

/** The upgrade request a carrier sends: Twilio's signed unless `sign` is false. */
export async function upgradeAt(provider: string, runId: number, url: string, headers: Record<string, string> = { Upgrade: "websocket" }, sign = true) {
  const h = new Headers(headers);
  if (provider === "twilio" && sign) h.set("X-Twilio-Signature", await twilioUpgradeSignature(runId, url));
  return exports.default.fetch(new Request(url, { headers: h }));
}

export const upgrade = async (provider: string, runId: number, token?: string, headers: Record<string, string> = { Upgrade: "websocket" }) =>
  upgradeAt(provider, runId, await mediaUrl(provider, runId, token), headers);

export async function connect(provider: MediaProvider, runId: number, options?: CalleeOptions): Promise<CalleeStream> {
  const res = await upgrade(provider, runId);
  if (res.status !== 101) throw new Error(`upgrade refused: ${res.status} ${await res.text()}`);
  const ws = res.webSocket!;
  ws.accept();
  const callee = new CalleeStream(ws, CALLEE_PROTOCOLS[provider], options);
  callee.open((await runRow(runId)).providerCallId!);
  return callee;
}

/** The Worker with the echo agent on the media path (the test pool leaves VOICE_AGENT empty). */
export const ECHO_WORKER = { ...env, VOICE_AGENT: "echo" } as Env;

/** One request to the Worker under `workerEnv` (its own VOICE_AGENT), its background work (waitUntil) finished. */
export async function fetchWorker(req: Request, workerEnv: Env) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(req, workerEnv, ctx);
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, text, contentType: res.headers.get("content-type") ?? "" };
}

/** A call started on `provider` whose session is prepared for the echo agent. */
export async function echoCall(provider: ProviderName) {
  const s = await setup(provider);
  const runId = await startCall(s);
  await callSessionStub(env, runId).prepare({ agent: "echo" });
  return { s, runId };
}
