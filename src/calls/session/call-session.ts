// One Durable Object per answered call (keyed by run): the carrier's media socket ends here. It carries the call's
// audio both ways through one codec, framing and pacing layer, keeps the call's clock, marks and transcript, and
// ends the call through the carrier when the agent hangs up, the callee stays silent too long, the call reaches its
// maximum length or the media fails, so no run is left open. The socket is accepted with the hibernation API.
//
// The session's clock is the callee's audio: carriers stream it continuously (silence included), one 20 ms frame
// at a time, so counting frames gives the play clock the pacer needs without timers, in tests as on a real call.
import { DurableObject } from "cloudflare:workers";
import { and, eq, isNull, like, not, or, sql } from "drizzle-orm";
import { workflowRuns } from "../../db/schema";
import { getDb } from "../../lib/db";
import { Framer, FRAME_MS, frameBytes } from "../../lib/audio/framer";
import { G711_SILENCE, g711Decode, g711Encode } from "../../lib/audio/g711";
import { isVoiced } from "../../lib/audio/level";
import { Pacer } from "../../lib/audio/pacer";
import { pcm16FromBytes, pcm16ToBytes } from "../../lib/audio/pcm";
import { Resampler, type SampleRate } from "../../lib/audio/resample";
import { DoSql, migrateOnStart } from "../../lib/do-sql";
import { log } from "../../lib/log";
import { openWebSocket } from "../../lib/websocket-open";
import { getProvider } from "../../telephony/providers/registry";
import { loadGreeting } from "../../uploads/greetings";
import type { MediaAdapter, MediaEvent, MediaFormat, ProviderName } from "../../telephony/providers/types";
import { MAX_CALL_SECONDS } from "../call-length";
import { hangupRun } from "../start";
import { ConversationAgent } from "../agent/conversation-agent";
import { conversationFor, scriptedEngines, type ScriptedEngines } from "../agent/load";
import { enginesFor } from "../agent/engines";
import { EchoAgent, GreetingAgent, liveAgent, type AgentName } from "./agents";
import { Recorder } from "./recorder";
import { CALL_SESSION_MIGRATIONS, type TurnRow } from "./session-schema";
import type { AgentControls, EndReason, Turn, VoiceAgent, VoicemailAction } from "./voice-agent";

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
  campaign?: { campaignId: number; contactId: number; attempt: number } | null;
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

const CONNECT_TIMEOUT_MS = 10_000;

/** The callee's silence after which the call is ended, unless configured otherwise. */
export const SILENCE_TIMEOUT_SECONDS = 30;

type GreetingClip = { samples: Int16Array; rate: SampleRate };

type Live = {
  ws: WebSocket;
  adapter: MediaAdapter;
  format: MediaFormat;
  streamId: string;
  agent: VoiceAgent;
  inbound: Framer;
  outbound: Framer;
  pacer: Pacer;
  resamplers: Map<number, Resampler>;
  clockMs: number;
  lastActivityMs: number;
  started: boolean;
  /** Limits read once: the per-frame path touches no storage. */
  maxMs: number;
  silenceMs: number;
  recorder: Recorder | null;
};

export class CallSession extends DurableObject<Env> {
  private readonly db: DoSql;
  private live: Live | null = null;
  /** The media socket this session opened itself (server mode), not one accepted with the hibernation API. */
  private outbound: WebSocket | null = null;
  private inOrder: Promise<void> = Promise.resolve();
  private ending: Promise<void> | null = null;
  /** Whether the call has ended, kept in memory once read (every message checks it). */
  private ended: boolean | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = new DoSql(ctx.storage);
    void migrateOnStart(ctx, this.db, CALL_SESSION_MIGRATIONS);
  }

  /** Chooses the agent and limits before the stream connects (the greeting agent and the defaults otherwise). */
  async prepare(options: SessionOptions): Promise<void> {
    if (options.agent) this.db.putKv("agent", options.agent);
    if (options.silenceSeconds) this.db.putKv("silence_ms", options.silenceSeconds * 1000);
    if (options.maxCallSeconds) this.db.putKv("max_ms", options.maxCallSeconds * 1000);
    if (options.greetingClip) await this.ctx.storage.put("greeting_clip", options.greetingClip);
    if (options.record !== undefined) this.db.putKv("record", options.record ? "1" : "0");
    if (options.scripted) await this.ctx.storage.put("scripted_engines", options.scripted);
  }

  /** The call's state: why it ended (null while live) and the transcript so far. */
  async snapshot(): Promise<{ ended: boolean; endReason: EndReason | null; streamId: string | null; turns: Turn[] }> {
    const turns = this.turns().map((t) => ({
      role: t.role as Turn["role"],
      text: t.text,
      startMs: t.start_ms,
      endMs: t.end_ms,
      ...(t.interrupted ? { interrupted: true } : {}),
    }));
    return { ended: this.db.getKv("ended") === "1", endReason: this.db.getKv("end_reason") as EndReason | null, streamId: this.db.getKv("stream_id"), turns };
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
    this.ctx.acceptWebSocket(pair[1]);
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
      this.ending ??= this.end("media_error");
      await this.ending;
      return { ok: false, error };
    }
    ws.accept();
    (ws as { binaryType?: string }).binaryType = "arraybuffer";
    this.outbound = ws;
    ws.addEventListener("message", (e) => this.ctx.waitUntil(this.webSocketMessage(ws, e.data as string | ArrayBuffer)));
    // The carrier dropped the media socket without the call ending first: the call cannot go on without it. (After
    // the messages before it.)
    const gone = () => {
      this.inOrder = this.inOrder.then(() => {
        this.ending ??= this.end("media_error");
        return this.ending;
      });
      this.ctx.waitUntil(this.inOrder);
    };
    ws.addEventListener("close", gone);
    ws.addEventListener("error", gone);
    return { ok: true };
  }

  /**
   * The carrier's answering-machine verdict, arrived while the call runs (asynchronous detection): handed to the
   * agent in turn with the stream's messages. Before the stream starts the agent reads it at its start instead.
   */
  async machineDetected(answeredBy: string): Promise<boolean> {
    this.ended ??= this.db.getKv("ended") === "1";
    if (this.ended || this.db.getKv("run_id") === null) return false;
    this.db.putKv("answered_by", answeredBy);
    const ws = this.live?.ws ?? this.ctx.getWebSockets()[0];
    if (!ws) return false;
    const handled = this.inOrder.then(async () => {
      const live = await this.liveFor(ws);
      if (!live.started || this.ending || !live.agent.onMachine) return false;
      await live.agent.onMachine(answeredBy);
      if (!this.ending) this.pump(live);
      return true;
    });
    this.inOrder = handled.then(
      () => {},
      () => {},
    );
    return handled;
  }

  /** The carrier reports the call over (the callee hung up): the session ends without a hang-up request. */
  async carrierEnded(): Promise<void> {
    if (this.db.getKv("run_id") === null || this.db.getKv("ended") === "1") return;
    this.ending ??= this.end("callee_hangup");
    await this.ending;
  }

  /** Records the run the stream belongs to; refuses a second stream for the call, or one after it ended. */
  private async begin(start: SessionStart): Promise<string | null> {
    if (this.db.getKv("ended") === "1") return "This call's media stream has ended";
    // One stream per call: a second upgrade (a replayed URL) is refused while the first is open, or once it was.
    if (this.db.getKv("run_id") !== null) return "A media stream was already connected for this call";
    this.db.putKv("run_id", start.runId);
    this.db.putKv("org_id", start.orgId);
    this.db.putKv("provider", start.provider);
    this.db.putKv("greeting", start.greeting ?? "");
    if (start.greetingRecording) this.db.putKv("greeting_recording", start.greetingRecording);
    if (start.answeredBy) this.db.putKv("answered_by", start.answeredBy);
    this.db.putKv("voicemail", start.voicemail ?? "hang_up");
    if (start.campaign) this.db.putKv("campaign", JSON.stringify(start.campaign));
    this.db.putKv("variables", JSON.stringify(start.variables));
    if (this.db.getKv("record") === null) this.db.putKv("record", start.record ? "1" : "0");
    const maxMs = Number(this.db.getKv("max_ms") ?? MAX_CALL_SECONDS * 1000);
    await this.ctx.storage.setAlarm(Date.now() + maxMs);
    return null;
  }

  /**
   * Messages are handled one at a time, in order: the handler awaits I/O (the greeting from R2, a recording part),
   * and the runtime would otherwise start on the next message meanwhile (frames out of order, a second agent).
   */
  async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const handled = this.inOrder.then(() => this.onMessage(ws, message));
    this.inOrder = handled.catch(() => {});
    return handled;
  }

  private async onMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    this.ended ??= this.db.getKv("ended") === "1";
    if (this.ended) return;
    const live = await this.liveFor(ws);
    try {
      for (const ev of live.adapter.parse(message)) {
        await this.handle(live, ev);
        if (this.ending) break;
      }
      if (!this.ending) this.pump(live);
    } catch (err) {
      log("error", "media_error", { run_id: Number(this.db.getKv("run_id")), error: String(err) });
      this.ending ??= this.end("media_error");
    }
    if (this.ending) await this.ending;
  }

  async webSocketClose(): Promise<void> {
    this.ending ??= this.end("callee_hangup");
    await this.ending;
  }

  async webSocketError(): Promise<void> {
    this.ending ??= this.end("media_error");
    await this.ending;
  }

  /** The call reached its maximum length (a wall-clock backstop to the audio clock's own check). */
  async alarm(): Promise<void> {
    if (this.db.getKv("ended") === "1" || this.db.getKv("run_id") === null) return;
    this.ending ??= this.end("max_call_seconds");
    await this.ending;
  }

  /** The agent the call gets: the prepared one, else the VOICE_AGENT setting's; the greeting agent otherwise. */
  private async makeAgent(): Promise<VoiceAgent> {
    const name = this.db.getKv("agent") ?? liveAgent(this.env);
    if (name === "echo") return new EchoAgent();
    if (name === "conversation") {
      const variables = JSON.parse(this.db.getKv("variables") ?? "{}");
      const agent = await conversationFor(this.env, Number(this.db.getKv("run_id")), variables);
      const scripted = await this.ctx.storage.get<ScriptedEngines>("scripted_engines");
      // Prepared engines (tests, the demo), else the providers the agent chose (Workers AI by default). Without
      // them (or a usable graph) the call gets the greeting agent, and the log says why.
      const choice = agent ? await enginesFor(this.env, Number(this.db.getKv("org_id")), agent.configurations) : null;
      if (agent && scripted) return new ConversationAgent(agent.conversation, scriptedEngines(scripted), choice?.turn);
      if (agent && choice?.ok) return new ConversationAgent(agent.conversation, choice.engines, choice.turn);
      log("warning", "conversation_agent_unavailable", {
        run_id: Number(this.db.getKv("run_id")),
        graph: !!agent,
        reason: choice && !choice.ok ? choice.reason : null,
      });
    }
    return new GreetingAgent(await this.greetingClip());
  }

  /** The greeting as audio: a prepared clip, else the contact's audio greeting from the store, else none. */
  private async greetingClip(): Promise<GreetingClip | null> {
    const prepared = await this.ctx.storage.get<GreetingClip>("greeting_clip");
    if (prepared) return prepared;
    const key = this.db.getKv("greeting_recording");
    return key ? loadGreeting(this.env.UPLOADS, key) : null;
  }

  private async liveFor(ws: WebSocket): Promise<Live> {
    if (this.live && this.live.ws === ws) return this.live;
    const provider = getProvider(this.db.getKv("provider") ?? "");
    const adapter = provider.calls?.media;
    if (!adapter) throw new Error(`${provider.displayName} has no media stream`);
    // After hibernation the agent starts afresh; its stream, if started, carries on.
    const streamId = this.db.getKv("stream_id");
    const clockMs = Number(this.db.getKv("clock_ms") ?? 0);
    this.live = {
      ws,
      adapter,
      format: adapter.format,
      streamId: streamId ?? "",
      agent: await this.makeAgent(),
      inbound: new Framer(frameSize(adapter.format)),
      outbound: new Framer(frameSize(adapter.format)),
      pacer: new Pacer(),
      resamplers: new Map(),
      clockMs,
      lastActivityMs: clockMs,
      started: streamId !== null,
      maxMs: Number(this.db.getKv("max_ms") ?? MAX_CALL_SECONDS * 1000),
      silenceMs: Number(this.db.getKv("silence_ms") ?? SILENCE_TIMEOUT_SECONDS * 1000),
      // A session woken from hibernation records on from where it is (what was buffered before is lost with it).
      recorder: this.db.getKv("record") === "0" ? null : new Recorder(adapter.format.rate),
    };
    return this.live;
  }

  private async handle(live: Live, ev: MediaEvent): Promise<void> {
    switch (ev.kind) {
      case "start": {
        if (live.started) return;
        live.started = true;
        live.streamId = ev.streamId;
        if (ev.format) live.format = ev.format;
        live.inbound = new Framer(frameSize(live.format));
        live.outbound = new Framer(frameSize(live.format));
        if (live.recorder) live.recorder = new Recorder(live.format.rate);
        this.db.putKv("stream_id", ev.streamId);
        const variables = JSON.parse(this.db.getKv("variables") ?? "{}");
        // The contact's audio greeting, for the voice agent to open with (the greeting agent has its clip already).
        const recording = live.agent instanceof ConversationAgent ? this.db.getKv("greeting_recording") : null;
        const greetingAudio = recording ? await loadGreeting(this.env.UPLOADS, recording) : null;
        await live.agent.onStart(
          {
            runId: Number(this.db.getKv("run_id")),
            variables,
            // A recording gone since the call started: the agent's own greeting rather than the recording's name.
            greeting: recording && !greetingAudio ? null : this.db.getKv("greeting") || null,
            greetingAudio,
            rate: live.format.rate,
            answeredBy: this.db.getKv("answered_by"),
            voicemail: this.db.getKv("voicemail") === "leave_message" ? "leave_message" : "hang_up",
          },
          this.controls(live),
        );
        return;
      }
      case "audio": {
        if (!live.started) return;
        const frames: Uint8Array[] = [];
        live.inbound.push(ev.payload, (f) => frames.push(f));
        for (const f of frames) {
          live.clockMs += FRAME_MS;
          const samples = decode(live.format, f);
          const part = live.recorder?.tick(live.clockMs, samples);
          if (part) await this.storePart(part, live.format.rate);
          const voiced = isVoiced(samples);
          if (voiced) live.lastActivityMs = live.clockMs;
          await live.agent.onAudio({ samples, rate: live.format.rate, atMs: live.clockMs, voiced });
          if (this.ending) return;
          this.limits(live);
          if (this.ending) return;
        }
        return;
      }
      case "mark":
        await live.agent.onMark(ev.name);
        return;
      case "dtmf":
        return;
      case "stop":
        this.ending ??= this.end("callee_hangup");
        return;
    }
  }

  /** Ends the call when nobody has spoken for too long, or it ran too long. */
  private limits(live: Live): void {
    const { maxMs, silenceMs } = live;
    // While the agent speaks the line is not idle: the callee's silence counts from when it stops.
    if (live.pacer.busy(live.clockMs)) live.lastActivityMs = live.clockMs;
    if (live.clockMs >= maxMs) this.ending ??= this.end("max_call_seconds");
    else if (live.clockMs - live.lastActivityMs >= silenceMs) this.ending ??= this.end("callee_silent");
  }

  /** Sends what the pacer lets out now; for carriers that echo no marks, reports the marks played by the clock. */
  private pump(live: Live): void {
    for (const item of live.pacer.due(live.clockMs)) {
      if (item.kind === "frame") {
        live.ws.send(live.adapter.audio(item.frame, live.streamId));
        live.recorder?.agentFrame(item.at, decode(live.format, item.frame));
      } else if (live.adapter.mark) live.ws.send(live.adapter.mark(item.name, live.streamId));
    }
    const played = live.pacer.played(live.clockMs);
    if (!live.adapter.mark) for (const name of played) void live.agent.onMark(name);
  }

  private controls(live: Live): AgentControls {
    const silence = live.format.codec === "pcm16" ? 0 : G711_SILENCE[live.format.codec];
    return {
      say: (samples, rate) => {
        if (this.ending) return;
        let s = samples;
        if (rate !== live.format.rate) {
          const r = live.resamplers.get(rate) ?? new Resampler(rate, live.format.rate as SampleRate);
          live.resamplers.set(rate, r);
          s = r.convert(samples);
        }
        live.outbound.push(encode(live.format, s), (f) => live.pacer.enqueue(f));
      },
      mark: (name) => {
        const rest = live.outbound.flush(silence);
        if (rest) live.pacer.enqueue(rest);
        live.pacer.mark(name);
      },
      clear: () => {
        live.outbound.reset();
        const dropped = live.pacer.clear(live.clockMs);
        if (live.adapter.clear) {
          live.ws.send(live.adapter.clear(live.streamId));
          // The carrier drops what it still held too: none of it was heard.
          live.recorder?.dropAgentFrom(live.clockMs);
        }
        return dropped;
      },
      transfer: async () => false,
      machine: () => {
        this.db.putKv("answered_by", "machine");
        // At once, not with the outcome: the carrier's final status may arrive before the session has saved.
        const runId = Number(this.db.getKv("run_id"));
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
      },
      hangup: (reason = "agent_hangup") => {
        this.ending ??= this.end(reason);
      },
      log: (t) => {
        this.db
          .run`INSERT INTO turns (role, text, start_ms, end_ms, interrupted) VALUES (${t.role}, ${t.text}, ${Math.round(t.startMs)}, ${Math.round(t.endMs)}, ${t.interrupted ? 1 : 0})`;
      },
      now: () => live.clockMs,
    };
  }

  private recordingKey(): string {
    return `recordings/${this.db.getKv("org_id")}/${this.db.getKv("run_id")}.pcm`;
  }

  /** Uploads one full part of the recording (R2 multipart: every part but the last is PART_BYTES). */
  private async storePart(part: Uint8Array, rate: number): Promise<void> {
    const bucket = this.env.UPLOADS;
    let uploadId = this.db.getKv("rec_upload");
    if (!uploadId) {
      const upload = await bucket.createMultipartUpload(this.recordingKey(), { customMetadata: { rate: String(rate), channels: "2" } });
      uploadId = upload.uploadId;
      this.db.putKv("rec_upload", uploadId);
    }
    const parts: R2UploadedPart[] = JSON.parse(this.db.getKv("rec_parts") ?? "[]");
    const uploaded = await bucket.resumeMultipartUpload(this.recordingKey(), uploadId).uploadPart(parts.length + 1, part);
    parts.push(uploaded);
    this.db.putKv("rec_parts", JSON.stringify(parts));
  }

  private turns(): TurnRow[] {
    return this.db.all<TurnRow>`SELECT * FROM turns ORDER BY id`;
  }

  /** Stores what is left of the recording and completes it; returns its key, or null when nothing was recorded. */
  private async finishRecording(): Promise<{ recordingKey: string; recordingRate: number } | null> {
    const recorder = this.live?.recorder;
    if (!recorder) return null;
    const rest = recorder.finish();
    const key = this.recordingKey();
    const uploadId = this.db.getKv("rec_upload");
    if (uploadId) {
      const upload = this.env.UPLOADS.resumeMultipartUpload(key, uploadId);
      const parts: R2UploadedPart[] = JSON.parse(this.db.getKv("rec_parts") ?? "[]");
      if (rest) parts.push(await upload.uploadPart(parts.length + 1, rest));
      await upload.complete(parts);
    } else if (rest) {
      await this.env.UPLOADS.put(key, rest, { customMetadata: { rate: String(recorder.rate), channels: "2" } });
    } else return null;
    return { recordingKey: key, recordingRate: recorder.rate };
  }

  /** The recording and the transcript onto the run (one write), where its details show them. */
  private async saveToRun(runId: number): Promise<void> {
    let recording: Awaited<ReturnType<CallSession["finishRecording"]>> = null;
    try {
      recording = await this.finishRecording();
    } catch (err) {
      log("error", "recording_failed", { run_id: runId, error: String(err) });
    }
    const turns = this.turns();
    const transcript = turns.map((t) => ({ role: t.role, text: t.text, start_ms: t.start_ms, end_ms: t.end_ms, interrupted: t.interrupted === 1 }));
    const outcome = this.live?.agent.outcome?.();
    const agent = outcome && {
      gatheredContext: outcome.gathered,
      disposition: outcome.disposition,
      // Appended: the run may already say why its greeting fell back.
      ...(outcome.note ? { notes: sql`coalesce(${workflowRuns.notes} || '; ', '') || ${outcome.note}` } : {}),
      usage: {
        stt_seconds: round2(outcome.usage.sttSeconds),
        tts_seconds: round2(outcome.usage.ttsSeconds),
        input_tokens: outcome.usage.inputTokens,
        output_tokens: outcome.usage.outputTokens,
      },
    };
    if (!recording && !transcript.length && !agent) return;
    try {
      await getDb(this.env)
        .update(workflowRuns)
        .set({ ...recording, ...(transcript.length ? { transcript } : {}), ...agent })
        .where(eq(workflowRuns.id, runId))
        .run();
    } catch (err) {
      log("error", "run_update_failed", { run_id: runId, error: String(err) });
    }
    const campaign = this.db.getKv("campaign");
    if (campaign && outcome?.disposition) {
      const { campaignId, contactId, attempt } = JSON.parse(campaign);
      try {
        await this.env.CAMPAIGN.get(this.env.CAMPAIGN.idFromName(String(campaignId))).onRunOutcome({
          runId,
          contactId,
          attempt,
          disposition: outcome.disposition,
        });
      } catch (err) {
        // The run keeps the disposition; only the campaign's count misses it.
        log("error", "campaign_disposition_failed", { run_id: runId, error: String(err) });
      }
    }
  }

  /** Ends the call once: tells the agent, hangs up through the carrier unless the callee did, closes the socket. */
  private async end(reason: EndReason): Promise<void> {
    if (this.db.getKv("ended") === "1") return;
    this.ended = true;
    this.db.putKv("ended", "1");
    this.db.putKv("end_reason", reason);
    if (this.live) this.db.putKv("clock_ms", this.live.clockMs);
    const runId = Number(this.db.getKv("run_id"));
    try {
      await this.live?.agent.onEnd(reason);
    } catch (err) {
      log("error", "agent_error", { run_id: runId, error: String(err) });
    }
    if (reason !== "callee_hangup") {
      try {
        await hangupRun(this.env, Number(this.db.getKv("org_id")), runId);
      } catch (err) {
        // The run watchdog ends a call the carrier would not hang up; the socket closes below either way.
        log("error", "hangup_failed", { run_id: runId, reason, error: String(err) });
      }
    }
    // After the hang-up (the callee is not kept waiting on the upload), before the socket closes.
    await this.saveToRun(runId);
    for (const ws of [...this.ctx.getWebSockets(), ...(this.outbound ? [this.outbound] : [])]) {
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

const round2 = (n: number) => Math.round(n * 100) / 100;

const frameSize = (f: MediaFormat) => frameBytes(f.rate, f.codec === "pcm16" ? 2 : 1);

function decode(f: MediaFormat, bytes: Uint8Array): Int16Array {
  return f.codec === "pcm16" ? pcm16FromBytes(bytes) : g711Decode(f.codec, bytes);
}

function encode(f: MediaFormat, samples: Int16Array): Uint8Array {
  return f.codec === "pcm16" ? pcm16ToBytes(samples) : g711Encode(f.codec, samples);
}
