// One Durable Object per answered call (keyed by run): the carrier's media socket ends here. It keeps the socket,
// the call's lifecycle and when it ends (the end's steps: session-end.ts); the audio path is the media loop
// (media-loop.ts), what a socket may send the input guard, the recording and the run's outcome their own modules, and
// the agent is reached only through the VoiceAgent seam.
//
// Two clocks. The audio clock (one frame of the callee's audio = 20 ms) paces the agent's speech and times the
// transcript. Time limits (silence, the call's length: wall-limits.ts; the agent's re-prompt and dead air) run on the
// wall clock, checked on every message and by a heartbeat alarm, so a stream that stops is noticed and a burst of
// late frames is not silence.
//
// Restarts. A deploy or a crash resets the object and drops its socket, but not its storage: the call's record,
// transcript, the agent's saved state and the recording's current part. The carrier reconnects through its own
// mechanism (a resume document, a restarted stream, a new external media channel) and the call goes on; a call
// whose media does not come back within RESUME_GRACE_MS is hung up and its run finished (`media_lost`).
import { DurableObject } from "cloudflare:workers";
import type { AgentControls, EndReason, Turn, VoiceAgent } from "../../agent/voice-agent";
import { isVoiced } from "../../lib/audio/level";
import { DoSql, migrateOnStart } from "../../lib/do-sql";
import { log } from "../../lib/log";
import { openWebSocket } from "../../lib/websocket-open";
import type { MediaEvent } from "../../telephony/providers/types";
import { HEARTBEAT_MS, RESUME_GRACE_MS } from "./call-length";
import { chooseAgent, loadPrepared, rememberLine, savePrepared } from "./choose-agent";
import type { KnownClip } from "../../agent/clip-speech";
import { agentContext } from "./agent-context";
import { agentControls } from "./controls";
import { type InputGuard, MAX_BAD_IN_A_ROW } from "./input-guard";
import { MediaSockets } from "./media-sockets";
import { MediaLoop } from "./media-loop";
import { Keypad } from "./keypad";
import { machineOnRun } from "./outcome";
import type { CallPorts } from "./ports";
import { SESSION_HEADER, type MediaState, type SessionOptions, type SessionStart } from "./protocol";
import { CallRecording } from "./recording";
import { CALL_SESSION_MIGRATIONS, insertTurn, readTurns } from "./session-schema";
import { endSession } from "./session-end";
import { armMediaWait, type MediaWait, mediaWaitAlarm } from "./run-final";
import { SessionRelease } from "./release";
import { SessionStore } from "./store";
import { mediaAdapterFor, requireMediaAdapter, sendTurn } from "./web-media";
import { TransferDesk } from "./transfer-desk";
import { limitReached, lostMedia, nextBeat, wallBounds } from "./wall-limits";
import type { TransferSettled } from "./ports";

export { HEARTBEAT_MS, RESUME_GRACE_MS, SILENCE_TIMEOUT_SECONDS } from "./call-length";
export { SESSION_HEADER, type MediaState, type SessionOptions, type SessionStart } from "./protocol";

const CONNECT_TIMEOUT_MS = 10_000;

type Live = { ws: WebSocket; loop: MediaLoop; agent: VoiceAgent; started: boolean; lastActivityWall: number };

/**
 * The session; the deployed class (src/calls/call-session.ts) supplies the calls module's operations it needs
 * (`calls`): hanging up through the carrier, finishing a run, a campaign's disposition.
 */
export abstract class CallSessionCore extends DurableObject<Env> {
  protected abstract readonly calls: CallPorts;
  private readonly db: DoSql;
  private readonly store: SessionStore;
  private readonly recording: CallRecording;
  private live: Live | null = null;
  private readonly sockets = new MediaSockets();
  private inOrder: Promise<unknown> = Promise.resolve();
  private ending: Promise<void> | null = null;
  private endUnderWay = false;
  private readonly keypad = new Keypad();
  private readonly desk: TransferDesk;
  private readonly release = new SessionRelease(this.ctx.storage, () => this.calls); // the storage, once the run is final

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = new DoSql(ctx.storage);
    this.store = new SessionStore(this.db);
    this.recording = new CallRecording(env.UPLOADS, this.db, this.store);
    void migrateOnStart(ctx, this.db, CALL_SESSION_MIGRATIONS, () => this.store.load());
    const ending = () => this.ending !== null || this.store.current.ended;
    this.desk = new TransferDesk({ ports: () => this.calls, record: () => this.store.current, ending, leave: () => void this.finish("transferred") });
  }

  /** The transfer's status route: "hold" (a report came; the carrier may move the caller), then its word (null: none). */
  async transferSettled(step: "hold" | TransferSettled | null): Promise<boolean> {
    return step === "hold" ? this.desk.hold() : this.desk.settle(step);
  }

  /** Chooses the agent and limits before the stream connects (the greeting agent and the defaults otherwise). */
  async prepare(options: SessionOptions): Promise<void> {
    this.store.set({
      agent: options.agent,
      silenceMs: options.silenceSeconds ? options.silenceSeconds * 1000 : undefined,
      maxMs: options.maxCallSeconds ? options.maxCallSeconds * 1000 : undefined,
      record: options.record,
    });
    await savePrepared(this.ctx.storage, options);
  }

  /** The call's state: why it ended (null while live) and the transcript so far. */
  async snapshot(): Promise<{ ended: boolean; endReason: EndReason | null; streamId: string | null; resumes: number; turns: Turn[] }> {
    const s = this.store.current;
    return { ended: s.ended, endReason: s.endReason, streamId: s.streamId, resumes: s.resumes, turns: this.release.gone ? [] : readTurns(this.db) };
  }

  /** Whether the call's media is connected, was lost and may come back (a carrier reconnecting asks), or is over. */
  async mediaState(): Promise<MediaState> {
    const s = this.store.current;
    if (s.ended) return "ended";
    if (s.runId === null) return "none";
    return this.sockets.current().length ? "live" : "lost";
  }

  /** The media socket's upgrade, forwarded by the stream route once the per-run token checked out. */
  async fetch(request: Request): Promise<Response> {
    const refuse = (status: number, detail: string) => Response.json({ detail }, { status });
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return refuse(426, "Expected a WebSocket upgrade");
    let start: SessionStart;
    try {
      start = JSON.parse(request.headers.get(SESSION_HEADER) ?? "");
    } catch {
      return refuse(400, "Missing session details");
    }
    const refusal = await this.begin(start);
    if (refusal) return refuse(409, refusal);
    const pair = new WebSocketPair();
    this.attach(pair[1]);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  /**
   * The session connects to the carrier's media socket itself (Asterisk's external media in server mode). An
   * outbound socket cannot hibernate: the object stays awake for the call, as the call's audio keeps it anyway.
   */
  async connectTo(url: string, start: SessionStart): Promise<{ ok: true } | { ok: false; error: string }> {
    const refusal = await this.begin(start);
    if (refusal) return { ok: false, error: refusal };
    let ws: WebSocket | null = null;
    let error = "";
    try {
      const res = await openWebSocket(url, { "Sec-WebSocket-Protocol": "media" }, CONNECT_TIMEOUT_MS);
      ws = res.webSocket;
      if (!ws) error = `the media socket answered HTTP ${res.status}`;
    } catch (err) {
      error = String((err as Error)?.message ?? err);
    }
    if (!ws) {
      log("error", "media_connect_failed", { run_id: start.runId, error });
      await this.finish("media_error", "the media socket could not be opened");
      return { ok: false, error };
    }
    this.attach(ws);
    return { ok: true };
  }

  private attach(ws: WebSocket): void {
    const failed = (err: unknown) => log("error", "media_handler_failed", { run_id: this.store.current.runId, error: String(err) });
    this.sockets.attach(ws, {
      message: (data) => void this.onSocketMessage(ws, data)?.catch(failed),
      close: () => void this.onSocketClose(ws).catch(failed),
    });
  }

  /**
   * The carrier's answering-machine verdict, arrived while the call runs (asynchronous detection): handed to the
   * agent in turn with the stream's messages. Before the stream starts the agent reads it at its start instead.
   */
  async machineDetected(answeredBy: string): Promise<boolean> {
    const s = this.store.current;
    if (s.ended || s.runId === null) return false;
    this.store.set({ answeredBy });
    const ws = this.live?.ws ?? this.sockets.current()[0];
    if (!ws) return false;
    return this.serially(async () => {
      const live = await this.liveFor(ws);
      if (!live.started || this.ending || !live.agent.onMachine) return false;
      await live.agent.onMachine(answeredBy);
      if (!this.ending) this.pump(live);
      return true;
    });
  }

  /** An agent test's persona caller is about to say a line: the offline speech-to-text learns it (kept for a restart). */
  async learnLine(clip: KnownClip): Promise<void> {
    await rememberLine(this.ctx.storage, clip);
    this.live?.agent.learnLine?.(clip);
  }

  /** A key the carrier reported by callback (Telnyx's webhook, ARI's events): to the agent in turn, like the stream's. */
  async dtmfReceived(digit: string): Promise<boolean> {
    return this.serially(async () => !this.store.current.ended && !this.ending && !!this.live && this.keypad.press(this.live, digit, "callback"));
  }

  async awaitMedia(wait: MediaWait): Promise<void> {
    if (this.store.current.runId === null && !this.store.current.ended) await armMediaWait(this.ctx.storage, wait);
  }

  /** The carrier reports the call over (the callee hung up): the session ends without a hang-up request. */
  async carrierEnded(): Promise<void> {
    const s = this.store.current;
    if (s.runId === null || s.ended) return;
    if (await this.desk.tookCall()) return;
    await this.finish("callee_hangup", "the carrier reported the call over");
  }

  /** Records the run the stream belongs to at its first connection; a later one is the call's media coming back. */
  private async begin(start: SessionStart): Promise<string | null> {
    const s = this.store.current;
    if (s.ended) return "This call's media stream has ended";
    const now = Date.now();
    if (s.runId === null) {
      this.store.set({
        runId: start.runId,
        orgId: start.orgId,
        provider: start.provider,
        greeting: start.greeting ?? "",
        greetingRecording: start.greetingRecording ?? null,
        answeredBy: start.answeredBy ?? null,
        voicemail: start.voicemail ?? "hang_up",
        outbound: start.outbound ?? false,
        campaign: start.campaign ?? null,
        variables: start.variables,
        record: s.record ?? start.record,
        startedWall: now,
      });
    } else {
      // A reconnect (each stream URL is single-use): any older socket gives way; the call goes on from what is stored.
      this.sockets.supersedeAll();
      this.live = null;
    }
    await this.schedule(now + HEARTBEAT_MS);
    return null;
  }

  /**
   * Messages are handled one at a time, in order: the handler awaits I/O (the greeting from R2, a recording part),
   * and the runtime would otherwise start on the next message meanwhile (frames out of order, a second agent).
   */
  private onSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> | undefined {
    if (this.sockets.isSuperseded(ws) || this.store.current.ended) return;
    const admitted = this.sockets.admit(ws, message, Date.now());
    if (!admitted) return;
    if ("flood" in admitted) {
      log("error", "media_flood", { run_id: this.store.current.runId, dropped: admitted.flood.dropped });
      return this.serially(() => this.finish("media_error", "the carrier's socket kept sending far above any real rate"));
    }
    this.sockets.waiting++;
    return this.serially(async () => {
      // Behind: let the runtime serve other calls between this socket's messages rather than run them all at once.
      if (this.sockets.waiting > 1) await new Promise((r) => setTimeout(r, 0));
      this.sockets.waiting--;
      return this.onMessage(ws, message, admitted.guard);
    });
  }

  private async onMessage(ws: WebSocket, message: string | ArrayBuffer, guard: InputGuard): Promise<void> {
    if (this.store.current.ended || this.ending || this.sockets.isSuperseded(ws)) return;
    const live = await this.liveFor(ws);
    let events: MediaEvent[];
    try {
      events = live.loop.adapter.parse(message);
      guard.readable();
    } catch (err) {
      // One undecodable frame is dropped (and counted); only a stream that stays unreadable ends the call.
      if (guard.bad === 0 || guard.bad % 100 === 0)
        log("warning", "media_unreadable", { run_id: this.store.current.runId, count: guard.bad + 1, error: String(err) });
      if (guard.unreadable()) await this.finish("media_error", `${MAX_BAD_IN_A_ROW} unreadable media messages in a row (${guard.bad} in all)`);
      return;
    }
    try {
      for (const ev of events) {
        await this.handle(live, ev);
        if (this.ending) break;
      }
      if (!this.ending) {
        this.limits(live, Date.now());
        this.pump(live);
      }
    } catch (err) {
      log("error", "media_error", { run_id: this.store.current.runId, error: String(err) });
      await this.finish("media_error", String((err as Error)?.message ?? err).slice(0, 200));
    }
  }

  /** A socket closed: by the carrier's hang-up where it says so, else the media was lost and may come back. */
  private async onSocketClose(ws: WebSocket): Promise<void> {
    if (this.sockets.isSuperseded(ws) || this.store.current.ended) return;
    await this.serially(async () => {
      if (this.live?.ws === ws) this.live = null;
      this.sockets.drop(ws);
      const provider = this.store.current.provider;
      // A carrier that ends its stream only by closing it (no stop message) has hung up.
      if (provider && mediaAdapterFor(provider)?.closeEndsCall && !(await this.desk.tookCall()))
        return this.finish("callee_hangup", "the carrier closed its media stream");
      this.store.set({ lostSince: Date.now() });
      await this.schedule(Date.now() + RESUME_GRACE_MS);
    });
  }

  /** The heartbeat: wall-clock limits, a lost socket's grace, and what a restart needs saved. */
  async alarm(): Promise<void> {
    const s = this.store.current;
    // An end under way sets the release's alarm when it is done: the heartbeat due meanwhile (seen on a busy machine)
    // must not release now, since the end reads the transcript after the run is final.
    if (s.ended && this.endUnderWay) return this.ending?.catch(() => undefined);
    if (s.ended) return this.release.run(s.runId);
    if (s.runId === null) return mediaWaitAlarm(this.ctx.storage, this.env, this.calls, Date.now(), () => this.noMedia());
    await this.serially(() => this.beat(Date.now()));
  }

  /** The media wait's deadline passed: unless the media began meanwhile, no media is accepted from now on. */
  private noMedia(): boolean {
    if (this.store.current.runId !== null || this.store.current.ended) return false;
    this.store.set({ ended: true, endReason: "media_error" });
    this.release.gone = true;
    return true;
  }

  private async beat(now: number): Promise<void> {
    const s = this.store.current;
    if (s.ended || this.ending) return;
    const bounds = wallBounds(s);
    const maxAt = (s.startedWall ?? now) + bounds.maxMs;
    if (now >= maxAt) return this.finish("max_call_seconds");
    const ws = this.sockets.current()[0];
    if (!ws) {
      const lostSince = s.lostSince ?? now;
      if (s.lostSince === null) this.store.set({ lostSince });
      const lost = lostMedia(lostSince, now, maxAt);
      return "end" in lost ? this.finish("media_lost", lost.end) : this.schedule(lost.at);
    }
    const live = await this.liveFor(ws);
    this.store.set({ clockMs: live.loop.clockMs, clockWall: now, lostSince: null });
    if (live.loop.recorder) this.recording.checkpoint(live.loop.recorder);
    this.limits(live, now);
    if (this.ending) return;
    await live.agent.onTick?.(now);
    if (this.ending) return;
    this.pump(live);
    await this.schedule(nextBeat(bounds, now, live.lastActivityWall, maxAt));
  }

  private async schedule(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at || current < Date.now()) await this.ctx.storage.setAlarm(at);
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const done = this.inOrder.then(fn);
    this.inOrder = done.catch(() => {});
    return done;
  }

  private async liveFor(ws: WebSocket): Promise<Live> {
    if (this.live && this.live.ws === ws) return this.live;
    const s = this.store.current;
    const adapter = requireMediaAdapter(s.provider ?? "");
    const now = Date.now();
    // A restarted session's clock goes on from the last saved reading, plus the time since.
    const gap = s.clockWall !== null ? Math.max(0, now - s.clockWall) : 0;
    const loop = new MediaLoop(adapter, (m) => ws.send(m), s.clockMs + gap, s.streamId ?? "", s.record !== false);
    if (loop.recorder) {
      this.recording.restore(loop.recorder);
      for (const part of loop.recorder.skip(gap)) await this.recording.storePart(part, loop.recorder.rate);
    }
    const agent = await chooseAgent(this.env, s, await loadPrepared(this.ctx.storage));
    const live: Live = { ws, loop, agent, started: false, lastActivityWall: now };
    this.live = live;
    return live;
  }

  private async handle(live: Live, ev: MediaEvent): Promise<void> {
    switch (ev.kind) {
      case "start": {
        if (live.started) return;
        const resumed = this.store.current.streamId !== null;
        live.loop.start(ev.streamId, ev.format);
        this.store.set({
          streamId: ev.streamId,
          rate: live.loop.format.rate,
          ...(resumed ? { resumes: this.store.current.resumes + 1, lostSince: null } : {}),
        });
        if (resumed) log("info", "call_media_resumed", { run_id: this.store.current.runId, resumes: this.store.current.resumes });
        const s = this.store.current;
        await this.startAgent(live, resumed, s.clockWall !== null ? Math.max(0, Date.now() - s.clockWall) : 0);
        return;
      }
      case "audio": {
        if (!live.started) return;
        const now = Date.now();
        for (const samples of live.loop.frames(ev.payload, now)) {
          const part = live.loop.tick(samples);
          if (part) await this.recording.storePart(part, live.loop.format.rate);
          const voiced = isVoiced(samples);
          // While the agent speaks the line is not idle: the callee's silence counts from when it stops.
          if (voiced || live.loop.pacer.busy(live.loop.clockMs)) live.lastActivityWall = now;
          await live.agent.onAudio({ samples, rate: live.loop.format.rate, atMs: live.loop.clockMs, voiced });
          if (this.ending) return;
        }
        await live.agent.onTick?.(now);
        return;
      }
      case "mark":
        if (live.loop.confirmed(ev.name)) await live.agent.onMark(ev.name);
        return;
      case "dtmf":
        await this.keypad.press(live, ev.digit, "stream");
        return;
      case "text":
      case "typing":
        if (!live.started) return;
        live.lastActivityWall = Date.now();
        await live.agent.onText?.(ev.kind === "text" ? ev.text : "");
        return;
      case "stop":
        if (await this.desk.tookCall()) return;
        await this.finish("callee_hangup", "the carrier's media stream stopped");
        return;
    }
  }

  private async startAgent(live: Live, resumed: boolean, gapMs: number): Promise<void> {
    live.started = true;
    const context = await agentContext(this.env.UPLOADS, this.store.current, { agent: live.agent, rate: live.loop.format.rate, resumed, gapMs });
    await live.agent.onStart(context, this.controls(live));
  }

  /** Ends the call when the callee has been silent too long, or it ran too long, by the wall clock (wall-limits.ts). */
  private limits(live: Live, now: number): void {
    const s = this.store.current;
    // While a person's phone rings for a warm transfer, the caller is on hold, not silent.
    const reached = limitReached(wallBounds(s), s.startedWall, live.lastActivityWall, now, this.desk.ringing);
    if (reached) void this.finish(reached);
  }

  /** Sends what the pacer lets out now; for carriers that echo no marks, reports the marks played by the clock. */
  private pump(live: Live): void {
    for (const name of live.loop.pump()) void live.agent.onMark(name);
  }

  private controls(live: Live): AgentControls {
    return agentControls(live.loop, {
      current: () => this.live === live && !this.ending,
      hangup: (reason, note) => void this.finish(reason, note),
      sendDtmf: (digits) => this.keypad.send(live.loop, digits, this.store.current, this.calls),
      transfer: (request) => this.desk.request(request),
      machine: () => {
        this.store.set({ answeredBy: "machine" });
        this.ctx.waitUntil(machineOnRun(this.env, this.store.current.runId ?? 0));
      },
      log: (t) => {
        insertTurn(this.db, t);
        sendTurn(this.store.current.provider, live.ws, t, live.agent);
      },
      save: (state, clockMs) => this.store.set({ agentState: state, clockMs, clockWall: Date.now() }),
    });
  }

  /** Ends the call once, whoever asks first; later callers wait for the same end. */
  private finish(reason: EndReason, detail: string | null = null): Promise<void> {
    if (!this.ending) {
      this.endUnderWay = true;
      this.ending = this.end(reason, detail).finally(() => {
        this.endUnderWay = false;
      });
    }
    return this.ending;
  }

  /** The end itself, in order (session-end.ts): the agent, the run, the hang-up, the recording, the results. */
  private end(reason: EndReason, detail: string | null): Promise<void> {
    const { env, calls, db, store, recording, desk, sockets, release, live } = this;
    return endSession({ env, calls, db, store, recording, desk, sockets, storage: this.ctx.storage, release, live }, reason, detail);
  }
}
