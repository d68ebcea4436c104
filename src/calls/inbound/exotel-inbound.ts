// Exotel's calls that come in (docs/inbound.md#exotel). Exotel opens the Voicebot applet's WebSocket only once the
// call is answered and sends no HTTP request first, so the Worker accepts the socket itself, reads the opening
// (`connected`, `start` with the call's numbers), admits the call as every carrier's (src/calls/inbound/inbound-admit.ts) and
// then pipes the socket to the run's call session, replaying the opening first: the session sees exactly what an
// outbound Exotel stream sends, and ends the run on `stop` or the close. One invocation holds both sockets for the
// call's duration. A refused call's socket is closed with the reason: Exotel's flow then goes on to its next applet.
import { eq } from "drizzle-orm";
import { telephonyConfigs } from "../../db/schema";
import { getDb } from "../../lib/db";
import { CALL_SETTINGS, requireSettings } from "../../lib/deployment";
import { ApiError } from "../../lib/errors";
import { log } from "../../lib/log";
import { verifyInboundToken } from "../../telephony/inbound-url";
import { readOpening } from "../../telephony/providers/exotel/inbound";
import type { InboundCall } from "../../telephony/providers/types";
import type { ConfigRow } from "../../telephony/view";
import { refused } from "../callbacks/proof";
import { admitInbound } from "./inbound-admit";
import { sessionStart } from "../start/session-start";
import { SESSION_HEADER } from "../session/protocol";
import { callSessionStub } from "../session/stub";
import { getRun, type RunRow } from "../runs/runs";
import { applyStatus } from "../runs/status";

/** How long, and for how many messages, the opening may take before `start` has named the call. */
export const OPENING_TIMEOUT_MS = 5000;
export const OPENING_MAX_MESSAGES = 4;

type Frame = string | ArrayBuffer;

/** Close codes a peer may send (1005/1006 only describe a close; they cannot be sent). */
const sendable = (code: number) => (code === 1000 || (code >= 3000 && code <= 4999) ? code : 1000);

function closeQuietly(ws: WebSocket, code: number, reason: string) {
  try {
    ws.close(code, reason.slice(0, 120));
  } catch {
    // already closed
  }
}

/** The upgrade to the inbound stream URL: the token (401 before accepting), then the socket accepted and bridged. */
export async function exotelInboundStream(
  env: Env,
  ctx: { waitUntil(p: Promise<unknown>): void },
  request: Request,
  configId: number,
  token: string,
): Promise<Response> {
  requireSettings(env, CALL_SETTINGS);
  if (!(await verifyInboundToken(env.CALLBACK_SECRET, "exotel", configId, token))) throw refused(401, "Invalid inbound token");
  const row = await getDb(env).select().from(telephonyConfigs).where(eq(telephonyConfigs.id, configId)).get();
  if (row?.provider !== "exotel") throw refused(401, "Invalid inbound token");
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") throw new ApiError(426, "Expected a WebSocket upgrade");
  const pair = new WebSocketPair();
  const caller = pair[1];
  caller.accept();
  ctx.waitUntil(bridge(env, row, caller, request.url, (p) => ctx.waitUntil(p)));
  return new Response(null, { status: 101, webSocket: pair[0] });
}

/**
 * Buffers the caller's messages until the session's socket is open (media may follow `start` at once), admits the
 * call on `start`, then pipes both ways. Resolves once the pipe is set up (or the call refused); from then on the
 * sockets' own events carry the call.
 */
function bridge(env: Env, row: ConfigRow, caller: WebSocket, url: string, keep: (p: Promise<unknown>) => void): Promise<void> {
  const buffered: Frame[] = [];
  let session: WebSocket | null = null;
  let over = false;
  let count = 0;
  let ended: ((by: "caller" | "session") => Promise<void>) | null = null;
  return new Promise<void>((resolve) => {
    const done = (why?: { code: number; reason: string; log?: string }) => {
      clearTimeout(timer);
      if (why) {
        over = true;
        if (why.log) log("warning", "exotel_inbound_closed", { config_id: row.id, reason: why.log });
        closeQuietly(caller, why.code, why.reason);
      }
      resolve();
    };
    const timer = setTimeout(() => done({ code: 1008, reason: "no start message in time", log: "opening_timeout" }), OPENING_TIMEOUT_MS);
    caller.addEventListener("message", (e) => {
      const data = e.data as Frame;
      if (session) return session.send(data);
      if (over) return;
      buffered.push(data);
      const m = readOpening(data);
      if (m.kind === "start") {
        clearTimeout(timer);
        admit(m.call).then(done, (err) => {
          log("error", "exotel_inbound_failed", { config_id: row.id, call_id: m.call.callId, error: String(err) });
          done({ code: 1011, reason: "internal error" });
        });
      } else if (++count >= OPENING_MAX_MESSAGES) done({ code: 1008, reason: "no start message", log: "opening_without_start" });
    });
    caller.addEventListener("close", (e) => {
      if (session) {
        closeQuietly(session, sendable(e.code), e.reason || "caller closed");
        if (ended) keep(ended("caller"));
        return;
      }
      // The caller went before the call was put through: nothing to end (an admitted run is ended in `admit`).
      over = true;
      done();
    });

    async function admit(call: InboundCall): Promise<{ code: number; reason: string } | undefined> {
      const admitted = await admitInbound(env, row, "exotel", call, "in_progress");
      if (!admitted.ok) return { code: 1000, reason: admitted.reason === "concurrent_call_limit" ? "busy" : `refused: ${admitted.reason}` };
      const run = admitted.run;
      const headers = new Headers({ Upgrade: "websocket", [SESSION_HEADER]: JSON.stringify(await sessionStart(env, run, "exotel")) });
      const res = await callSessionStub(env, run.id).fetch(new Request(url, { headers }));
      const ws = res.webSocket;
      if (res.status !== 101 || !ws || over) {
        const error = over ? "the caller hung up before the agent answered" : `the call session refused the stream (HTTP ${res.status})`;
        ws?.close(1000, "caller gone");
        await applyStatus(env, run, over ? { status: "completed" } : { status: "failed", error });
        return over ? undefined : { code: 1011, reason: "the agent is unavailable" };
      }
      ws.accept();
      for (const f of buffered.splice(0)) ws.send(f);
      session = ws;
      ws.addEventListener("message", (e) => {
        try {
          caller.send(e.data as Frame);
        } catch {
          // the caller's socket closed; its close event ends the session's
        }
      });
      ended = callEnded(env, run, Date.now());
      ws.addEventListener("close", (e) => {
        closeQuietly(caller, sendable(e.code), e.reason || "call ended");
        if (ended) keep(ended("session"));
      });
      return undefined;
    }
  });
}

/**
 * The end of an admitted call, once: Exotel reports no status for an applet's stream, so the stream's end is the
 * call's. A caller's socket that closed without `stop` tells the session the caller went (it would otherwise wait for
 * the media to come back, which an inbound stream never does); then the run completes with the stream's duration.
 */
function callEnded(env: Env, run: RunRow, startedMs: number) {
  let once: Promise<void> | null = null;
  return (by: "caller" | "session") =>
    (once ??= (async () => {
      try {
        if (by === "caller") await callSessionStub(env, run.id).carrierEnded();
        const now = await getRun(getDb(env), run.id);
        if (now) await applyStatus(env, now, { status: "completed", durationSeconds: Math.round((Date.now() - startedMs) / 1000) });
      } catch (err) {
        log("error", "exotel_inbound_end_failed", { run_id: run.id, error: String(err) });
      }
    })());
}
