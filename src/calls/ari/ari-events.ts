// One Durable Object per ARI configuration: holds the PBX's events WebSocket while calls are in flight, and for as
// long as the configuration has a number with an inbound agent (listening: a caller's StasisStart is a new call,
// src/calls/ari/ari-inbound.ts), maps channel events to run statuses (Q.850 causes), reconnects with backoff, and marks
// the configuration inactive when the PBX keeps refusing or dropping the socket.
import { DurableObject } from "cloudflare:workers";
import { and, eq, isNotNull, isNull } from "drizzle-orm";
import { phoneNumbers, telephonyConfigs, workflowRuns } from "../../db/schema";
import { getDb } from "../../lib/db";
import { jsonMessage } from "../../lib/helpers";
import { basicAuth } from "../../telephony/providers/kit";
import { clock, isoNow } from "../../lib/clock";
import { DoSql, migrateOnStart } from "../../lib/do-sql";
import {
  ariAuth,
  ariBase,
  ariCalls,
  ariChannelAlive,
  ariEndpointRefusal,
  mapAriEvent,
  PBX_UNREACHABLE,
  runIdOfChannel,
  type AriChannelState,
} from "../../telephony/providers/ari/calls";
import { providerEnvOf } from "../../telephony/provisioning";
import { loadConfigContext } from "../../telephony/resolve";
import { findConfigWithNumbersById } from "../../telephony/store";
import { bridgeAriMedia, endAriMedia, runChannelOfMedia, startAriMedia } from "../../telephony/providers/ari/media";
import { str } from "../../telephony/providers/kit";
import type { ConfigContext } from "../../telephony/providers/types";
import { log } from "../../lib/log";
import { openWebSocket } from "../../lib/websocket-open";
import { ARI_EVENTS_MIGRATIONS, type CallRow } from "./ari-events-schema";
import { reconnectAriMedia } from "./ari-resume";
import { takeAriInbound } from "./ari-inbound";
import { incomingAriCall } from "../../telephony/providers/ari/inbound";
import { ariTransferEvent, endTransferred } from "./ari-transfer";
import type { MediaState } from "../session/protocol";
import { streamToken } from "../callbacks/callback-urls";
import { liveAgent } from "../session/agents";
import { sessionStart } from "../start/session-start";
import { callSessionStub } from "../session/stub";
import { campaignCallIds } from "../runs/campaign-call-ids";
import { getRun, isFinal } from "../runs/runs";
import { applyStatus } from "../runs/status";
import { keyToSession } from "../callbacks/keypad";

/** Consecutive failed connections (or drops) before the configuration is marked inactive. */
export const ARI_MAX_FAILURES = 5;
export const ARI_BACKOFF_MS = [1000, 2000, 5000, 10_000, 30_000];
/** A tracked call with no final event after this long is given up on (the run is left to the engine's timeout). */
export const ARI_TRACK_TTL_MS = 2 * 3600 * 1000;
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * While calls are in flight the object wakes this often, so a socket lost without a close event is reopened soon
 * and an object with calls to follow is never idle long enough to be evicted.
 */
export const ARI_HEARTBEAT_MS = 5000;
/** While listening, how often the object asks whether the configuration still has a number with an inbound agent. */
export const ARI_LISTEN_CHECK_MS = 60_000;
export const ARI_UNSEEN_END = "The call ended while the ARI events connection was down; its outcome is unknown";
export const ARI_NO_SPEECH_NOTE = "ARI has no text-to-speech: the greeting was not spoken, and the answered call was ended";
export const ARI_MEDIA_FAILED_NOTE = "The call's audio could not be connected to its voice agent, and the answered call was ended";

export class AriEventsObject extends DurableObject<Env> {
  private socket: WebSocket | null = null;
  private connecting: Promise<{ connected: boolean; error?: string }> | null = null;
  private readonly db: DoSql;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = new DoSql(ctx.storage);
    void migrateOnStart(ctx, this.db, ARI_EVENTS_MIGRATIONS);
  }

  private inFlight(): number {
    return this.db.value<number>`SELECT count(*) FROM calls` ?? 0;
  }

  /** Nothing to hold the socket for: no call in flight, and not listening for calls that come in. */
  private idle(): boolean {
    return this.inFlight() === 0 && !Number(this.db.getKv("listening") ?? 0);
  }

  /** The run of a channel: ours name it; a caller's (Asterisk's id) is in the inbound map. */
  private runOf(channelId: string): number | null {
    return runIdOfChannel(channelId) ?? this.db.value<number>`SELECT run_id FROM inbound WHERE channel_id = ${channelId}` ?? null;
  }

  /**
   * The configuration has (or may have) a number with an inbound agent: the socket stays open to hear its callers,
   * and the heartbeat keeps it so until no such number is left (checked every ARI_LISTEN_CHECK_MS).
   */
  async listen(configId: number): Promise<{ connected: boolean; error?: string }> {
    this.db.putKv("config_id", configId);
    this.db.putKv("listening", 1);
    this.db.putKv("listen_checked_at", clock.now());
    const result = await this.ensureConnected();
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(clock.now() + ARI_HEARTBEAT_MS);
    return result;
  }

  /** Whether any active number of the (active) configuration still has an inbound agent; stops listening if not. */
  private async checkListening(): Promise<void> {
    if (!Number(this.db.getKv("listening") ?? 0) || clock.now() - Number(this.db.getKv("listen_checked_at") ?? 0) < ARI_LISTEN_CHECK_MS) return;
    this.db.putKv("listen_checked_at", clock.now());
    const configId = Number(this.db.getKv("config_id"));
    const db = getDb(this.env);
    const config = await db.select({ inactive: telephonyConfigs.inactive }).from(telephonyConfigs).where(eq(telephonyConfigs.id, configId)).get();
    const number = await db
      .select({ id: phoneNumbers.id })
      .from(phoneNumbers)
      .where(and(eq(phoneNumbers.configId, configId), eq(phoneNumbers.isActive, true), isNotNull(phoneNumbers.inboundWorkflowId)))
      .get();
    if (!config || config.inactive || !number) this.db.putKv("listening", 0);
  }

  /** Registers a run about to be originated and makes sure the events socket is open before it is. */
  async track(configId: number, runId: number): Promise<{ connected: boolean; error?: string }> {
    this.db.putKv("config_id", configId);
    this.db.run`INSERT OR IGNORE INTO calls (run_id, tracked_at) VALUES (${runId}, ${clock.now()})`;
    const result = await this.ensureConnected();
    if (!result.connected) this.db.run`DELETE FROM calls WHERE run_id = ${runId}`;
    else if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(clock.now() + ARI_HEARTBEAT_MS);
    return result;
  }

  /** The PBX refused the originate: nothing to watch for this run (the socket closes when nothing else is). */
  async untrack(runId: number): Promise<void> {
    this.db.run`DELETE FROM calls WHERE run_id = ${runId}`;
    if (this.idle()) this.closeSocket();
  }

  /** We asked the PBX to hang this channel up: a later cause 16 before answer means canceled, not no_answer. */
  async noteHangup(channelId: string): Promise<void> {
    const runId = runIdOfChannel(channelId);
    if (runId !== null) this.db.run`UPDATE calls SET hung_up_by_us = 1 WHERE run_id = ${runId}`;
  }

  /** For tests and diagnostics. */
  async status(): Promise<{ connected: boolean; inFlight: number; failures: number; listening: boolean }> {
    const listening = !!Number(this.db.getKv("listening") ?? 0);
    return { connected: this.socket !== null, inFlight: this.inFlight(), failures: Number(this.db.getKv("failures") ?? 0), listening };
  }

  private ensureConnected(): Promise<{ connected: boolean; error?: string }> {
    if (this.socket) return Promise.resolve({ connected: true });
    this.connecting ??= this.openSocket().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async openSocket(): Promise<{ connected: boolean; error?: string }> {
    const configId = Number(this.db.getKv("config_id"));
    const found = configId ? await findConfigWithNumbersById(getDb(this.env), configId) : undefined;
    if (!found) return { connected: false, error: "configuration not found" };
    let ws: WebSocket | null = null;
    let error = "";
    try {
      const ctx = await loadConfigContext(this.env, found.row, found.numbers);
      // SSRF: saved while the organization allowed private PBX addresses, maybe no longer allowed: never fetched then.
      const refusal = ariEndpointRefusal(ctx);
      if (refusal) return { connected: false, error: refusal };
      const { user, password } = ariAuth(ctx);
      const url = `${ariBase(ctx)}/events?${new URLSearchParams({ app: String(ctx.config.app_name ?? "") })}`;
      const res = await openWebSocket(url, { Authorization: basicAuth(user, password) }, CONNECT_TIMEOUT_MS);
      ws = res.webSocket;
      if (!ws) error = `the PBX answered HTTP ${res.status} to the events WebSocket${res.status === 401 ? " (check app_name and app_password)" : ""}`;
    } catch (err) {
      // Generic to the caller (whether a port answered is not told to a client); the details go to the log.
      log("error", "pbx_unreachable", { msg: "ARI events WebSocket unreachable", config_id: configId, error: String((err as Error)?.message ?? err) });
      error = PBX_UNREACHABLE;
    }
    if (!ws) {
      await this.noteFailure(error);
      return { connected: false, error };
    }
    ws.accept();
    this.socket = ws;
    this.db.putKv("failures", 0);
    ws.addEventListener("message", (e) => {
      this.ctx.waitUntil(this.onMessage(typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data as ArrayBuffer)));
    });
    const onGone = (why: string) => {
      if (this.socket !== ws) return;
      this.socket = null;
      if (!this.idle()) this.ctx.waitUntil(this.noteFailure(why));
    };
    ws.addEventListener("close", (e) => onGone(`events WebSocket closed (${e.code}${e.reason ? ` ${e.reason}` : ""})`));
    ws.addEventListener("error", () => onGone("events WebSocket error"));
    return { connected: true };
  }

  /** Counts a failure; retries with backoff while calls are in flight; gives up (inactive) after ARI_MAX_FAILURES. */
  private async noteFailure(error: string): Promise<void> {
    const failures = Number(this.db.getKv("failures") ?? 0) + 1;
    this.db.putKv("failures", failures);
    this.db.putKv("last_error", error);
    log("warning", "ari_events_connect_failed", { config_id: this.db.getKv("config_id"), failures, error });
    if (failures >= ARI_MAX_FAILURES) {
      await this.markInactive(error);
      return;
    }
    if (!this.idle()) await this.ctx.storage.setAlarm(clock.now() + ARI_BACKOFF_MS[Math.min(failures - 1, ARI_BACKOFF_MS.length - 1)]);
  }

  private async markInactive(error: string): Promise<void> {
    const configId = Number(this.db.getKv("config_id"));
    const reason = `ARI events connection failed ${ARI_MAX_FAILURES} times in a row: ${error}`;
    if (configId) {
      await getDb(this.env)
        .update(telephonyConfigs)
        .set({ inactive: true, inactiveSince: isoNow(), inactiveReason: reason })
        .where(eq(telephonyConfigs.id, configId));
    }
    // Without the socket the outcome of the tracked calls cannot be known.
    const runs = this.db.all<Pick<CallRow, "run_id">>`SELECT run_id FROM calls`;
    this.db.run`DELETE FROM calls`;
    this.db.run`DELETE FROM inbound`;
    this.db.putKv("failures", 0);
    this.db.putKv("listening", 0);
    for (const { run_id } of runs) {
      const run = await getRun(getDb(this.env), run_id);
      if (run) await applyStatus(this.env, run, { status: "unknown", error: "Lost the ARI events connection; the outcome is unknown" });
    }
  }

  /** A reconnect after a failure (backoff), or the heartbeat while calls are in flight. */
  async alarm(): Promise<void> {
    this.db.run`DELETE FROM calls WHERE tracked_at < ${clock.now() - ARI_TRACK_TTL_MS}`;
    this.db.run`DELETE FROM inbound WHERE run_id NOT IN (SELECT run_id FROM calls)`;
    await this.checkListening();
    if (this.idle()) {
      this.closeSocket();
      return;
    }
    const wasDown = this.socket === null;
    const { connected } = await this.ensureConnected();
    if (!connected) return; // noteFailure set the backoff alarm
    if (wasDown) await this.reconcile();
    await this.resumeLost();
    if (!this.idle()) await this.ctx.storage.setAlarm(clock.now() + ARI_HEARTBEAT_MS);
  }

  /** Runs whose media is being reconnected now: the destroyed channel's event and the heartbeat ask at most once. */
  private readonly resuming = new Set<number>();

  /** The call's media socket was lost while the call is up: a new external media channel into its bridge. */
  private async resumeMedia(runChannelId: string, when?: (state: MediaState) => boolean): Promise<void> {
    const runId = this.runOf(runChannelId);
    if (runId === null || this.resuming.has(runId) || !this.db.one<CallRow>`SELECT * FROM calls WHERE run_id = ${runId} AND answered = 1`) return;
    this.resuming.add(runId);
    try {
      const ctx = await this.configContext();
      if (ctx) await reconnectAriMedia(this.env, ctx, runId, runChannelId, when);
    } catch (err) {
      log("error", "ari_media_reconnect_failed", { run_id: runId, error: String((err as Error)?.message ?? err) });
    } finally {
      this.resuming.delete(runId);
    }
  }

  /** On the heartbeat: answered calls whose session reports its media lost (no event said so) are reconnected too. */
  private async resumeLost(): Promise<void> {
    const db = getDb(this.env);
    for (const row of this.db.all<CallRow>`SELECT * FROM calls WHERE answered = 1`) {
      const channelId = (await getRun(db, row.run_id))?.providerCallId;
      if (channelId) await this.resumeMedia(channelId, (state) => state === "lost");
    }
  }

  /**
   * Events sent while the socket was down are lost: each tracked call whose channel the PBX no longer has ended
   * unseen. An answered one completed; for the others the outcome cannot be known.
   */
  private async reconcile(): Promise<void> {
    const ctx = await this.configContext();
    if (!ctx) return;
    const db = getDb(this.env);
    for (const row of this.db.all<CallRow>`SELECT * FROM calls`) {
      const run = await getRun(db, row.run_id);
      // A campaign call not yet answered has its channel id in its campaign's object only.
      const callId = run && (run.providerCallId ?? (await campaignCallIds(this.env, [run])).get(run.id));
      if (!run || !callId) continue;
      if ((await ariChannelAlive(ctx, providerEnvOf(this.env), callId)) !== false) continue;
      this.db.run`DELETE FROM calls WHERE run_id = ${row.run_id}`;
      this.db.run`DELETE FROM inbound WHERE run_id = ${row.run_id}`;
      if (isFinal(run.status)) continue;
      const end = row.answered ? { status: "completed" as const } : { status: "unknown" as const, error: ARI_UNSEEN_END };
      await applyStatus(this.env, run, { ...end, providerCallId: callId });
      if (row.answered && liveAgent(this.env) !== null) await this.endLive(row.run_id, callId);
      log("warning", "ari_call_ended_unseen", { run_id: row.run_id, answered: !!row.answered });
    }
    if (this.idle()) this.closeSocket();
  }

  private closeSocket(): void {
    const ws = this.socket;
    this.socket = null;
    try {
      ws?.close(1000, "no calls in flight, none to listen for");
    } catch {
      // already closed
    }
  }

  private async configContext(): Promise<ConfigContext | null> {
    const configId = Number(this.db.getKv("config_id"));
    const found = await findConfigWithNumbersById(getDb(this.env), configId);
    return found ? loadConfigContext(this.env, found.row, found.numbers) : null;
  }

  /**
   * The channel answered and entered our app. Without a voice agent there is nothing to say (ARI has no
   * text-to-speech), so the call is ended rather than left open; the run records why nothing was spoken.
   */
  private async endAnswered(runId: number, channelId: string, note = ARI_NO_SPEECH_NOTE): Promise<void> {
    await getDb(this.env)
      .update(workflowRuns)
      .set({ notes: note })
      .where(and(eq(workflowRuns.id, runId), isNull(workflowRuns.notes)));
    const ctx = await this.configContext();
    if (!ctx) return;
    try {
      await ariCalls.hangup(ctx, providerEnvOf(this.env), channelId);
    } catch (err) {
      log("warning", "ari_hangup_after_answer_failed", { run_id: runId, error: String(err) });
    }
  }

  /**
   * With a voice agent the answered channel's audio goes to the run's call session: a bridge, an external media
   * channel on the WebSocket driver, and the session connecting to it (or Asterisk connecting to the session's
   * stream route, with `ws_client_name`). A call whose media cannot start is ended, saying why.
   */
  private async startLive(runId: number, channelId: string): Promise<void> {
    const ctx = await this.configContext();
    const run = await getRun(getDb(this.env), runId);
    if (!ctx || !run) return;
    const clientMode = str(ctx.config.ws_client_name) !== "";
    // Asterisk connects at once, so the short-lived, single-use stream token fits as for any carrier.
    const client = clientMode ? { runId, token: await streamToken(this.env.CALLBACK_SECRET, "ari", runId) } : null;
    const started = await startAriMedia(ctx, providerEnvOf(this.env), channelId, client);
    const error = started.ok ? null : started.message;
    if (started.ok && started.connectUrl) {
      const connected = await callSessionStub(this.env, runId).connectTo(started.connectUrl, await sessionStart(this.env, run, "ari"));
      // A session that could not connect has ended the call itself (media_error).
      if (!connected.ok) log("error", "ari_media_connect_failed", { run_id: runId, error: connected.error });
      return;
    }
    if (error) {
      log("error", "ari_media_failed", { run_id: runId, error });
      await this.endAnswered(runId, channelId, `${ARI_MEDIA_FAILED_NOTE}: ${error}`);
    }
  }

  /** The external media channel entered our app: it joins its call's bridge. */
  private async bridgeMedia(channelId: string): Promise<void> {
    const ctx = await this.configContext();
    if (!ctx) return;
    const added = await bridgeAriMedia(ctx, providerEnvOf(this.env), channelId);
    if (!added.ok) log("error", "ari_media_bridge_failed", { channel_id: channelId, error: added.message });
  }

  /** The call is over at the PBX: its session ends (no hang-up to send), and its bridge and media channel go. */
  private async endLive(runId: number, channelId: string): Promise<void> {
    await callSessionStub(this.env, runId).carrierEnded();
    const ctx = await this.configContext();
    if (!ctx) return;
    // A call handed to a person: their channel, left alone in the bridge, goes with the caller's.
    await endTransferred(this.env, ctx, channelId);
    await endAriMedia(ctx, providerEnvOf(this.env), channelId);
  }

  private async onMessage(text: string): Promise<void> {
    const ev = jsonMessage(text);
    if (!ev) return;
    if (ev.type === "ApplicationReplaced") {
      // Another client took the app's socket; this one receives nothing more.
      const ws = this.socket;
      this.socket = null;
      try {
        ws?.close(1000, "replaced");
      } catch {
        // already closed
      }
      if (!this.idle()) await this.noteFailure("another client connected to the same ARI application (ApplicationReplaced)");
      return;
    }
    // A transfer's person's channel, or the whisper played to it (src/calls/ari/ari-transfer.ts).
    if (await ariTransferEvent(this.env, ev, () => this.configContext())) return;
    const channelId = String(ev?.channel?.id ?? ev?.peer?.id ?? "");
    // A call's external media channel says nothing about the call's outcome; it only has to join the bridge.
    if (runChannelOfMedia(channelId)) {
      if (ev.type === "StasisStart") await this.bridgeMedia(channelId);
      // Asterisk hangs the media channel up when its socket closes: a new one, if the call goes on.
      else if (ev.type === "ChannelDestroyed") await this.resumeMedia(runChannelOfMedia(channelId)!);
      return;
    }
    // A channel we did not make is a caller only while listening (a number has an inbound agent); otherwise the
    // application's other users (a snoop, a channel another client put there) are left alone.
    const incoming = Number(this.db.getKv("listening") ?? 0) ? incomingAriCall(ev) : null;
    if (incoming && this.runOf(channelId) === null) return this.incoming(incoming);
    const runId = this.runOf(channelId);
    if (runId === null) return;
    const row = this.db.one<CallRow>`SELECT * FROM calls WHERE run_id = ${runId}`;
    if (!row) return; // not a call this configuration is tracking
    // A caller's channel entering the application again (its first StasisStart made the call) changes nothing.
    if (ev.type === "StasisStart" && runIdOfChannel(channelId) === null) return;
    // A key the callee pressed (ARI reports it on the run's channel while it is in our application).
    if (ev.type === "ChannelDtmfReceived")
      return keyToSession(this.env, await getRun(getDb(this.env), runId), { callId: channelId, digit: String(ev.digit ?? "") });
    const state: AriChannelState = { answered: !!row.answered, hungUpByUs: !!row.hung_up_by_us, dialStatus: row.dial_status };
    // A caller's channel came in through the dialplan's Stasis(): once it leaves the application (StasisEnd) its
    // events stop reaching us (its ChannelDestroyed is never seen), and the dialplan goes on to hang it up.
    const callerLeft = ev.type === "StasisEnd" && runIdOfChannel(channelId) === null;
    const update = mapAriEvent(callerLeft ? { ...ev, type: "ChannelDestroyed", cause: 16 } : ev, state);
    this.db.run`UPDATE calls SET answered = ${state.answered ? 1 : 0}, dial_status = ${state.dialStatus ?? null} WHERE run_id = ${runId}`;
    if (!update) return;
    const run = await getRun(getDb(this.env), runId);
    if (!run) return;
    const result = await applyStatus(this.env, run, update);
    const live = liveAgent(this.env) !== null;
    if (ev.type === "StasisStart") await (live ? this.startLive(runId, channelId) : this.endAnswered(runId, channelId));
    if (isFinal(result.status)) {
      if (live) await this.endLive(runId, channelId);
      this.db.run`DELETE FROM calls WHERE run_id = ${runId}`;
      this.db.run`DELETE FROM inbound WHERE run_id = ${runId}`;
      if (this.idle()) this.closeSocket();
    }
  }

  /**
   * A caller's channel entered our application: a new inbound call. Admitted, its channel mapped to its run and
   * watched as an answered call, then answered and bridged to the run's call session as an answered outbound call.
   */
  private async incoming(call: { callId: string; to: string; from: string }): Promise<void> {
    const ctx = await this.configContext();
    if (!ctx) return;
    let adopted: number | null = null;
    const runId = await takeAriInbound(this.env, ctx, call, (id) => {
      adopted = id;
      this.db.run`INSERT OR IGNORE INTO calls (run_id, tracked_at) VALUES (${id}, ${clock.now()})`;
      this.db.run`INSERT OR REPLACE INTO inbound (channel_id, run_id) VALUES (${call.callId}, ${id})`;
    });
    if (runId === null) {
      // Not answered (the caller went first): nothing of it to watch.
      if (adopted !== null) this.db.run`DELETE FROM calls WHERE run_id = ${adopted}`;
      if (adopted !== null) this.db.run`DELETE FROM inbound WHERE run_id = ${adopted}`;
      return;
    }
    this.db.run`UPDATE calls SET answered = 1 WHERE run_id = ${runId}`;
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(clock.now() + ARI_HEARTBEAT_MS);
    await (liveAgent(this.env) !== null ? this.startLive(runId, call.callId) : this.endAnswered(runId, call.callId));
  }
}
