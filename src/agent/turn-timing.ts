// Every reply to the caller, measured: when each stage of it was reached, in ms after the caller's last word ended
// (the end of their utterance on the call's audio clock). The agent has two clocks: the audio clock (`now()`, the
// frames' own times: when the caller stopped, when our first frame plays) and the wall clock (`wallNow()`: when the
// engines answered). At the end of turn both are read once; every later wall time is placed on the audio clock from
// there, so all figures share one origin and sequential ones only grow.
import type { ChatModel } from "./chat";
import type { FailoverLog } from "./failover";
import type { AgentControls, TurnTiming } from "./voice-agent";

type Stage = Exclude<keyof TurnTiming, "cut_ms" | "cut_words" | "first_audio_heard_ms" | keyof NonNullable<ReturnType<FailoverLog["take"]>>>;
type Open = { origin: number; audio: number; wall: number; f: TurnTiming };

export class TurnTimings {
  private t: Open | null = null;
  /** A turn the caller ended over the paused agent: the next reply's, once the barge-in cuts the one playing. */
  private pending: Open | null = null;

  /** The call's failover record (engines with fallbacks), taken into each reply's figures. */
  private failovers: FailoverLog | null = null;

  constructor(private readonly c: () => AgentControls) {}

  /** Engines with fallbacks: their record goes into each reply's figures, and `failingOver` hears each failover. */
  watch(log: FailoverLog | undefined, failingOver: () => void): void {
    if (!log) return;
    this.failovers = log;
    log.onFailover = failingOver;
  }

  /**
   * The end of the caller's turn was detected now; their last word ended at `lastWordMs` on the audio clock. `over`:
   * they spoke over the paused agent, whose reply keeps its own figures until it is cut (then this one goes on).
   */
  begin(lastWordMs: number, over = false): void {
    const c = this.c();
    const audio = c.now();
    const open = { origin: lastWordMs, audio, wall: c.wallNow(), f: { end_of_turn_ms: Math.max(0, audio - lastWordMs) } };
    if (over) this.pending = open;
    else [this.t, this.pending] = [open, null];
  }

  /** A stage reached now (the first time only); the transcript's by default goes to a turn ended over the agent. */
  mark(stage: Stage, t = this.pending ?? this.t): void {
    if (!t || t.f[stage] !== undefined) return;
    t.f[stage] = Math.max(0, Math.round(t.audio - t.origin + (this.c().wallNow() - t.wall)));
  }

  /** The model, with its first event (a token or a tool call) marked on the turn open now. */
  model(m: ChatModel): ChatModel {
    const t = this.t;
    const first = () => this.mark("model_first_token_ms", t);
    return {
      async *stream(request, signal) {
        for await (const ev of m.stream(request, signal)) {
          first();
          yield ev;
        }
      },
    };
  }

  /**
   * The reply's first sentence is ready: marked, and the voice's first audio for it (`firstAudio` is the speaker's
   * once-per-reply hook) marks the voice's first byte, then the carrier's first frame sent and when it plays.
   */
  sentence(voice: { onFirstAudio: (() => void) | null }): void {
    const t = this.t;
    if (!t || t.f.first_sentence_ms !== undefined) return;
    this.mark("first_sentence_ms", t);
    voice.onFirstAudio = () => {
      this.mark("voice_first_byte_ms", t);
      this.c().onSent?.((playsAtMs) => {
        this.mark("first_audio_sent_ms", t);
        t.f.first_audio_heard_ms ??= Math.max(0, Math.round(playsAtMs - t.origin));
      });
    };
  }

  /**
   * The figures of the reply that ends now, closed. `cut`: a barge-in cut it (what was never heard); the turn the
   * caller ended over it is the next reply's. Without, a turn ended over it was a backchannel and is dropped.
   */
  take(cut?: { ms: number; words: string } | null): TurnTiming | undefined {
    const t = this.t;
    [this.t, this.pending] = [cut ? this.pending : null, null];
    // What served since the last reply closed (the caller's words, this reply, its voice); a reply with no turn (the
    // greeting) carries it only when something failed over.
    const served = this.failovers?.take() ?? null;
    if (!t) return served?.failover_count ? served : undefined;
    if (cut) Object.assign(t.f, { cut_ms: Math.round(cut.ms), cut_words: cut.words });
    return served ? Object.assign(t.f, served) : t.f;
  }
}
