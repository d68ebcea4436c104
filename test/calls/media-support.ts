// Connecting to a run's media socket as its carrier would: the stream URL with the per-run token, the upgrade, and a
// simulated callee on the accepted socket.
import { env, exports } from "cloudflare:workers";
import { CALLEE_PROTOCOLS, type CalleeOptions, CalleeStream, type MediaProvider } from "../../src/dev/simulator/media/callee";
import { runRow } from "./support";

export async function mediaUrl(provider: string, runId: number, token?: string) {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(env.CALLBACK_SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = [...new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(`${provider}:${runId}`)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  // Asterisk dials one fixed websocket_client.conf URI with the run and token appended as parameters.
  if (provider === "ari") return `http://edgedial.test/api/v1/telephony/ari/stream?run_id=${runId}&token=${token ?? mac}`;
  return `http://edgedial.test/api/v1/telephony/${provider}/stream/${runId}/${token ?? mac}`;
}

export const upgrade = async (provider: string, runId: number, token?: string, headers: Record<string, string> = { Upgrade: "websocket" }) =>
  exports.default.fetch(new Request(await mediaUrl(provider, runId, token), { headers }));

export async function connect(provider: MediaProvider, runId: number, options?: CalleeOptions): Promise<CalleeStream> {
  const res = await upgrade(provider, runId);
  if (res.status !== 101) throw new Error(`upgrade refused: ${res.status} ${await res.text()}`);
  const ws = res.webSocket!;
  ws.accept();
  const callee = new CalleeStream(ws, CALLEE_PROTOCOLS[provider], options);
  callee.open((await runRow(runId)).providerCallId!);
  return callee;
}
