// One Durable Object per answered call (keyed by run): the carrier's media socket ends here. It keeps the socket,
// the call's lifecycle and ending it; the audio path is the media loop (media-loop.ts), what a socket may send the
// input guard, the recording and the run's outcome their own modules, and the agent is reached only through the
// VoiceAgent seam.
//
// Two clocks. The audio clock (one frame of the callee's audio = 20 ms) paces the agent's speech and times the
// transcript. Time limits (silence, the call's length, the agent's re-prompt and dead air) run on the wall clock,
// checked on every message and by a heartbeat alarm, so a stream that stops is noticed and a burst of late frames
// is not silence.
//
// Restarts. A deploy or a crash resets the object and drops its socket, but not its storage: the call's record,
// transcript, the agent's saved state and the recording's current part. The carrier reconnects through its own
// mechanism (a resume document, a restarted stream, a new external media channel) and the call goes on; a call
// whose media does not come back within RESUME_GRACE_MS is hung up and its run finished (`media_lost`).
import { DurableObject } from "cloudflare:workers";
import { and, eq, isNull, like, not, or } from "drizzle-orm";
import { workflowRuns } from "../../db/schema";
import { getDb } from "../../lib/db";
import { isVoiced } from "../../lib/audio/level";
import { DoSql, migrateOnStart } from "../../lib/do-sql";
import { log } from "../../lib/log";
import { openWebSocket } from "../../lib/websocket-open";
import { getProvider } from "../../telephony/providers/registry";
import { loadGreeting } from "../../uploads/greetings";
import type { MediaEvent, ProviderName } from "../../telephony/providers/types";
import { MAX_CALL_SECONDS } from "../call-length";
import { hangupRun } from "../start";
import type { ScriptedEngines } from "../../agent/load";
import type { AgentName } from "./agents";
import { chooseAgent, type GreetingClip } from "./choose-agent";
import { InputGuard, MAX_BAD_IN_A_ROW } from "./input-guard";
import { MediaLoop } from "./media-loop";
import { endNote, finishRun, recordEnd, saveResults } from "./outcome";
import { CallRecording } from "./recording";
import { CALL_SESSION_MIGRATIONS, type TurnRow } from "./session-schema";
import { SessionStore, type CampaignAttempt } from "./store";
import type { AgentControls, EndReason, Turn, VoiceAgent, VoicemailAction } from "../../agent/voice-agent";

/** What the Worker's stream route tells the session about its run, in this header of the upgrade. */
export const SESSION_HEADER = "X-Edgedial-Session";
export type SessionStart = {
  runId: number;
  orgId: number;
  provider: ProviderName;
  greeting: string | null;
  /** The R2 key of the contact's audio greeting, which the greeting agent plays; null: none (or gone). */
  greetingRecording?: string | null;
  variables: Record<string, string>;
  /** The organization's recording setting (prepare's `record` wins where given). */
  record: boolean;
  /** The carrier's answering-machine verdict so far, and what the campaign wants done with a machine. */
  answeredBy?: string | null;
  voicemail?: VoicemailAction;
  /** A campaign's call: the attempt its object hears the agent's disposition for. */
  campaign?: CampaignAttempt | null;
};
export type SessionOptions = {
  agent?: AgentName;
  /** The greeting as audio (a prerecorded clip) for the greeting agent to play. */
  greetingClip?: GreetingClip;
  silenceSeconds?: number;
  maxCallSeconds?: number;
  /** False: the call is not recorded. */
  record?: boolean;
  /** The conversation agent's deterministic engines (tests and the demo): a scripted model and known clips. */
  scripted?: ScriptedEngines;
};
export type MediaState = "none" | "live" | "lost" | "ended";

const CONNECT_TIMEOUT_MS = 10_000;
/** The callee's silence after which the call is ended, unless configured otherwise. */
export const SILENCE_TIMEOUT_SECONDS = 30;
/** How often a live session checks its wall-clock limits and its socket, and saves what a restart needs. */
export const HEARTBEAT_MS = 1000;
/** Media messages that may wait their turn (a second of audio); more are dropped. */
const MAX_WAITING = 50;
/** How long a call whose media socket was lost waits for the carrier to reconnect before it is hung up. */
export const RESUME_GRACE_MS = 5000;

type Live = { ws: WebSocket; loop: MediaLoop; agent: VoiceAgent; guard: InputGuard; started: boolean; lastActivityWall: number };

export class CallSession extends DurableObject<Env> {
  private readonly db: DoSql;
  private readonly store: SessionStore;
  private readonly recording: CallRecording;
  private live: Live | null = null;
  /** The media sockets attached to this instance (a restarted object starts with none). */
  private readonly attached = new Set<WebSocket>();
  /** Sockets a reconnect replaced: what they still send or report is ignored. */
  private readonly superseded = new WeakSet<WebSocket>();
  private readonly guards = new WeakMap<WebSocket, InputGuard>();
  private inOrder: Promise<unknown> = Promise.resolve();
  /** Media messages queued behind the one being handled. */
  private waiting = 0;
  private ending: Promise<void> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = new DoSql(ctx.storage);
    this.store = new SessionStore(this.db);
    this.recording = new CallRecording(env.UPLOADS, this.db, this.store);
    void migrateOnStart(ctx, this.db, CALL_SESSION_MIGRATIONS, () => this.store.load());
  }

  /** Chooses the agent and limits before the stream connects (the greeting agent and the defaults otherwise). */
  async prepare(options: SessionOptions): Promise<void> {
    this.store.set({
      agent: options.agent,
      silenceMs: options.silenceSeconds ? options.silenceSeconds * 1000 : undefined,
      maxMs: options.maxCallSeconds ? options.maxCallSeconds * 1000 : undefined,
      record: options.record,
    });
    if (options.greetingClip) await this.ctx.storage.put("greeting_clip", options.greetingClip);
    if (options.scripted) await this.ctx.storage.put("scripted_engines", options.scripted);
  }

  /** The call's state: why it ended (null while live) and the transcript so far. */
  async snapshot(): Promise<{ ended: boolean; endReason: EndReason | null; streamId: string | null; resumes: number; turns: Turn[] }> {
    const s = this.store.current;
    return { ended: s.ended, endReason: s.endReason, streamId: s.streamId, resumes: s.resumes, turns: this.turns() };
  }

  /** Whether the call's media is connected, was lost and may come back (a carrier reconnecting asks), or is over. */
  async mediaState(): Promise<MediaState> {
    const s = this.store.current;
    if (s.ended) return "ended";
    if (s.runId === null) return "none";
    return this.sockets().length ? "live" : "lost";
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

  /**
   * Takes a media socket in this object's own event loop. Not with the hibernation API: a call streams audio
   * continuously, so the object never sleeps anyway, and a hibernatable socket costs a full event per message, which
   * under a flood is what starved other calls. A restart drops the socket either way; the carrier reconnects.
   */
  private attach(ws: WebSocket): void {
    ws.accept();
    (ws as { binaryType?: string }).binaryType = "arraybuffer";
    this.attached.add(ws);
    const failed = (err: unknown) => log("error", "media_handler_failed", { run_id: this.store.current.runId, error: String(err) });
    ws.addEventListener("message", (e) => {
      this.onSocketMessage(ws, e.data as string | ArrayBuffer)?.catch(failed);
    });
    ws.addEventListener("close", () => void this.onSocketClose(ws).catch(failed));
    ws.addEventListener("error", () => void this.onSocketClose(ws).catch(failed));
  }

  /**
   * The carrier's answering-machine verdict, arrived while the call runs (asynchronous detection): handed to the
   * agent in turn with the stream's messages. Before the stream starts the agent reads it at its start instead.
   */
  async machineDetected(answeredBy: string): Promise<boolean> {
    const s = this.store.current;
    if (s.ended || s.runId === null) return false;
    this.store.set({ answeredBy });
    const ws = this.live?.ws ?? this.sockets()[0];
    if (!ws) return false;
    return this.serially(async () => {
      const live = await this.liveFor(ws);
      if (!live.started || this.ending || !live.agent.onMachine) return false;
      await live.agent.onMachine(answeredBy);
      if (!this.ending) this.pump(live);
      return true;
    });
  }

  /** The carrier reports the call over (the callee hung up): the session ends without a hang-up request. */
  async carrierEnded(): Promise<void> {
    const s = this.store.current;
    if (s.runId === null || s.ended) return;
    await this.finish("callee_hangup");
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
        campaign: start.campaign ?? null,
        variables: start.variables,
        record: s.record ?? start.record,
        startedWall: now,
      });
    } else {
      // A reconnect (the only way to a second connection: each stream URL is single-use): the older socket, if the
      // session still holds one, gives way, and the call goes on from what is stored.
      for (const ws of this.sockets()) {
        this.superseded.add(ws);
        try {
          ws.close(1000, "superseded by a reconnection");
        } catch {
          // already gone
        }
      }
      this.attached.clear();
      this.live = null;
    }
    await this.schedule(now + HEARTBEAT_MS);
    return null;
  }

  /**
   * Messages are handled one at a time, in order: the handler awaits I/O (the greeting from R2, a recording part),
   * and the runtime would otherwise start on the next message meanwhile (frames out of order, a second agent). The
   * input guard runs first, before any parsing, so a flood costs little and never waits in line.
   */
  private onSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> | undefined {
    if (this.superseded.has(ws) || this.store.current.ended) return;
    const guard = this.guards.get(ws) ?? new InputGuard();
    this.guards.set(ws, guard);
    const verdict = guard.admit(typeof message === "string" ? message.length : message.byteLength, Date.now());
    if (verdict === "drop") return;
    if (verdict === "flood") {
      log("error", "media_flood", { run_id: this.store.current.runId, dropped: guard.dropped });
      return this.serially(() => this.finish("media_error", "the carrier's socket kept sending far above any real rate"));
    }
    // Messages waiting their turn: past a second's worth the session is behind, and more only deepens that.
    if (this.waiting >= MAX_WAITING) {
      guard.dropped++;
      return;
    }
    this.waiting++;
    return this.serially(async () => {
      // Behind: let the runtime serve other calls between this socket's messages rather than run them all at once.
      if (this.waiting > 1) await new Promise((r) => setTimeout(r, 0));
      this.waiting--;
      return this.onMessage(ws, message, guard);
    });
  }

  private async onMessage(ws: WebSocket, message: string | ArrayBuffer, guard: InputGuard): Promise<void> {
    if (this.store.current.ended || this.ending || this.superseded.has(ws)) return;
    const live = await this.liveFor(ws);
    live.guard = guard;
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
    if (this.superseded.has(ws) || this.store.current.ended) return;
    await this.serially(async () => {
      if (this.live?.ws === ws) this.live = null;
      this.attached.delete(ws);
      const provider = this.store.current.provider;
      // A carrier that ends its stream only by closing it (no stop message) has hung up.
      if (provider && getProvider(provider).calls?.media?.closeEndsCall) return this.finish("callee_hangup");
      this.store.set({ lostSince: Date.now() });
      await this.schedule(Date.now() + RESUME_GRACE_MS);
    });
  }

  /** The heartbeat: wall-clock limits, a lost socket's grace, and what a restart needs saved. */
  async alarm(): Promise<void> {
    const s = this.store.current;
    if (s.ended || s.runId === null) return;
    await this.serially(() => this.beat(Date.now()));
  }

  private async beat(now: number): Promise<void> {
    const s = this.store.current;
    if (s.ended || this.ending) return;
    const maxAt = (s.startedWall ?? now) + (s.maxMs ?? MAX_CALL_SECONDS * 1000);
    if (now >= maxAt) return this.finish("max_call_seconds");
    const ws = this.sockets()[0];
    if (!ws) {
      const lostSince = s.lostSince ?? now;
      if (s.lostSince === null) this.store.set({ lostSince });
      if (now - lostSince >= RESUME_GRACE_MS) {
        return this.finish("media_lost", `for ${Math.round((now - lostSince) / 1000)} s (the service restarted or the carrier dropped it)`);
      }
      return this.schedule(Math.min(lostSince + RESUME_GRACE_MS, maxAt));
    }
    const live = await this.liveFor(ws);
    this.store.set({ clockMs: live.loop.clockMs, clockWall: now, lostSince: null });
    if (live.loop.recorder) this.recording.checkpoint(live.loop.recorder);
    this.limits(live, now);
    if (this.ending) return;
    await live.agent.onTick?.(now);
    if (this.ending) return;
    this.pump(live);
    await this.schedule(Math.min(now + HEARTBEAT_MS, live.lastActivityWall + this.silenceMs(), maxAt));
  }

  private async schedule(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at || current < Date.now()) await this.ctx.storage.setAlarm(at);
  }

  /** The sockets carrying the call's media now (at most one). */
  private sockets(): WebSocket[] {
    return [...this.attached].filter((ws) => !this.superseded.has(ws) && ws.readyState <= 1);
  }

  private silenceMs(): number {
    return this.store.current.silenceMs ?? SILENCE_TIMEOUT_SECONDS * 1000;
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const done = this.inOrder.then(fn);
    this.inOrder = done.catch(() => {});
    return done;
  }

  private async liveFor(ws: WebSocket): Promise<Live> {
    if (this.live && this.live.ws === ws) return this.live;
    const s = this.store.current;
    const adapter = getProvider(s.provider ?? "").calls?.media;
    if (!adapter) throw new Error(`${s.provider} has no media stream`);
    const now = Date.now();
    // A restarted session's clock goes on from the last saved reading, plus the time since.
    const gap = s.clockWall !== null ? Math.max(0, now - s.clockWall) : 0;
    const loop = new MediaLoop(adapter, (m) => ws.send(m), s.clockMs + gap, s.streamId ?? "", s.record !== false);
    if (loop.recorder) {
      this.recording.restore(loop.recorder);
      for (const part of loop.recorder.skip(gap)) await this.recording.storePart(part, loop.recorder.rate);
    }
    const agent = await chooseAgent(this.env, s, {
      greetingClip: await this.ctx.storage.get<GreetingClip>("greeting_clip"),
      scripted: await this.ctx.storage.get<ScriptedEngines>("scripted_engines"),
    });
    const live: Live = { ws, loop, agent, guard: this.guards.get(ws) ?? new InputGuard(), started: false, lastActivityWall: now };
    this.live = live;
    return live;
  }

  private async handle(live: Live, ev: MediaEvent): Promise<void> {
    switch (ev.kind) {
      case "start": {
        if (live.started) return;
        const resumed = this.store.current.streamId !== null;
        live.loop.start(ev.streamId, ev.format);
        this.store.set({ streamId: ev.streamId, ...(resumed ? { resumes: this.store.current.resumes + 1, lostSince: null } : {}) });
        if (resumed) log("info", "call_media_resumed", { run_id: this.store.current.runId, resumes: this.store.current.resumes });
        const s = this.store.current;
        await this.startAgent(live, resumed, s.clockWall !== null ? Math.max(0, Date.now() - s.clockWall) : 0);
        return;
      }
      case "audio": {
        if (!live.started) return;
        const now = Date.now();
        for (const samples of live.loop.frames(ev.payload)) {
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
        return;
      case "stop":
        await this.finish("callee_hangup");
        return;
    }
  }

  private async startAgent(live: Live, resumed: boolean, gapMs: number): Promise<void> {
    live.started = true;
    const s = this.store.current;
    // The contact's audio greeting, for the voice agent to open with (the greeting agent has its clip already).
    const recording = !resumed && live.agent.wantsGreetingAudio ? s.greetingRecording : null;
    const greetingAudio = recording ? await loadGreeting(this.env.UPLOADS, recording) : null;
    await live.agent.onStart(
      {
        runId: s.runId ?? 0,
        variables: s.variables,
        // A recording gone since the call started: the agent's own greeting rather than the recording's name.
        greeting: recording && !greetingAudio ? null : s.greeting || null,
        greetingAudio,
        rate: live.loop.format.rate,
        answeredBy: s.answeredBy,
        voicemail: s.voicemail,
        resumed: resumed ? { state: s.agentState, gapMs } : null,
      },
      this.controls(live),
    );
  }

  /** Ends the call when the callee has been silent too long, or it ran too long, by the wall clock. */
  private limits(live: Live, now: number): void {
    const s = this.store.current;
    if (now - (s.startedWall ?? now) >= (s.maxMs ?? MAX_CALL_SECONDS * 1000)) void this.finish("max_call_seconds");
    else if (now - live.lastActivityWall >= this.silenceMs()) void this.finish("callee_silent");
  }

  /** Sends what the pacer lets out now; for carriers that echo no marks, reports the marks played by the clock. */
  private pump(live: Live): void {
    for (const name of live.loop.pump()) void live.agent.onMark(name);
  }

  private controls(live: Live): AgentControls {
    const current = () => this.live === live && !this.ending;
    return {
      say: (samples, rate) => {
        if (current()) live.loop.say(samples, rate);
      },
      mark: (name) => {
        if (current()) live.loop.mark(name);
      },
      clear: () => (current() ? live.loop.clear() : []),
      transfer: async () => false,
      machine: () => this.machineRecorded(),
      hangup: (reason = "agent_hangup") => {
        if (current()) void this.finish(reason);
      },
      log: (t) => {
        this.db
          .run`INSERT INTO turns (role, text, start_ms, end_ms, interrupted) VALUES (${t.role}, ${t.text}, ${Math.round(t.startMs)}, ${Math.round(t.endMs)}, ${t.interrupted ? 1 : 0})`;
      },
      save: (state) => {
        // The clock with it: a call resumed from this point goes on from this time, not from the last heartbeat's.
        if (current()) this.store.set({ agentState: state, clockMs: live.loop.clockMs, clockWall: Date.now() });
      },
      now: () => live.loop.clockMs,
      wallNow: () => Date.now(),
    };
  }

  /** An answering machine: on the run at once, not with the outcome (the carrier's final status may come first). */
  private machineRecorded(): void {
    this.store.set({ answeredBy: "machine" });
    const runId = this.store.current.runId ?? 0;
    this.ctx.waitUntil(
      getDb(this.env)
        .update(workflowRuns)
        .set({ answeredBy: "machine_detected" })
        .where(and(eq(workflowRuns.id, runId), or(isNull(workflowRuns.answeredBy), not(like(workflowRuns.answeredBy, "machine%")))))
        .run()
        .then(
          () => undefined,
          (err) => log("error", "run_update_failed", { run_id: runId, error: String(err) }),
        ),
    );
  }

  private turns(): Turn[] {
    return this.db.all<TurnRow>`SELECT * FROM turns ORDER BY id`.map((t) => ({
      role: t.role as Turn["role"],
      text: t.text,
      startMs: t.start_ms,
      endMs: t.end_ms,
      ...(t.interrupted ? { interrupted: true } : {}),
    }));
  }

  /** Ends the call once, whoever asks first; later callers wait for the same end. */
  private finish(reason: EndReason, detail: string | null = null): Promise<void> {
    this.ending ??= this.end(reason, detail);
    return this.ending;
  }

  /**
   * Tells the agent, records why, hangs up through the carrier unless the callee did, saves the results, closes the
   * socket. A call whose media was lost is also made final here: the carrier's own report may never arrive.
   */
  private async end(reason: EndReason, detail: string | null): Promise<void> {
    const s = this.store.current;
    if (s.ended) return;
    const runId = s.runId ?? 0;
    const note = endNote(reason, { silenceMs: this.silenceMs(), maxMs: s.maxMs ?? MAX_CALL_SECONDS * 1000, detail });
    this.store.set({ ended: true, endReason: reason, endNote: note, ...(this.live ? { clockMs: this.live.loop.clockMs } : {}) });
    const live = this.live;
    try {
      await live?.agent.onEnd(reason);
    } catch (err) {
      log("error", "agent_error", { run_id: runId, error: String(err) });
    }
    await recordEnd(this.env, runId, reason, note);
    if (reason !== "callee_hangup") {
      try {
        await hangupRun(this.env, s.orgId, runId);
      } catch (err) {
        // The run watchdog ends a call the carrier would not hang up; the socket closes below either way.
        log("error", "hangup_failed", { run_id: runId, reason, error: String(err) });
      }
    }
    if (reason === "media_lost") await finishRun(this.env, runId, s.startedWall ? Math.round((Date.now() - s.startedWall) / 1000) : null);
    // After the hang-up (the callee is not kept waiting on the upload), before the socket closes.
    let recording: Awaited<ReturnType<CallRecording["finish"]>> = null;
    try {
      if (live?.loop.recorder) recording = await this.recording.finish(live.loop.recorder);
    } catch (err) {
      log("error", "recording_failed", { run_id: runId, error: String(err) });
    }
    await saveResults(this.env, runId, { recording, turns: this.turns(), outcome: live?.agent.outcome?.(), campaign: s.campaign });
    for (const ws of this.sockets()) {
      try {
        ws.close(1000, reason);
      } catch {
        // already closed by the far end
      }
    }
    await this.ctx.storage.deleteAlarm();
    log("info", "call_session_ended", { run_id: runId, reason });
  }
}
