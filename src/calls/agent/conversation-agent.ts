// The voice agent that runs an agent's graph on a call: it listens (an energy gate finds the callee's utterances and
// the end of their turn), transcribes each utterance, asks the model at the current node, and speaks the reply
// sentence by sentence as it streams. The callee talking over it stops its speech within a frame (barge-in) and
// only what was heard stays in the history. A callee who stays silent is asked once whether they are still there,
// then the call ends politely; a failing model or speech engine ends it politely too, never with dead air.
import { log } from "../../lib/log";
import type { AgentContext, AgentControls, AgentOutcome, AudioFrame, VoiceAgent } from "../session/voice-agent";
import type { ChatModel } from "./chat";
import type { Conversation } from "./graph";
import type { SpeechToText, TextToSpeech } from "./speech";
import { agentReply } from "./turn";

export type TurnSettings = {
  /** The callee's silence after speech that ends their turn. */
  endOfTurnMs: number;
  /** Voiced audio shorter than this is noise, not a turn. */
  minSpeechMs: number;
  /** The callee's silence (after the agent finished) before they are asked whether they are still there. */
  repromptAfterMs: number;
  maxReprompts: number;
  repromptText: string;
  goodbyeText: string;
  errorText: string;
  /** After the callee's turn, this long without the agent's voice (a slow model) gets a short filler. 0: never. */
  fillerAfterMs: number;
  fillerText: string;
};

export const DEFAULT_TURN_SETTINGS: TurnSettings = {
  endOfTurnMs: 700,
  minSpeechMs: 200,
  repromptAfterMs: 8000,
  maxReprompts: 1,
  repromptText: "Are you still there?",
  goodbyeText: "It seems this is not a good time. Goodbye!",
  errorText: "I'm sorry, I'm having trouble on my side. We'll try you again later. Goodbye!",
  fillerAfterMs: 1500,
  fillerText: "One moment.",
};

export type Engines = { model: ChatModel; stt: SpeechToText; tts: TextToSpeech };

/** What the agent is saying: the sentences by mark, those heard so far, and whether the reply is complete. */
type Speaking = { byMark: Map<string, string>; heard: string[]; startMs: number; complete: boolean; last: boolean };

export class ConversationAgent implements VoiceAgent {
  private c: AgentControls | null = null;
  private utterance: Int16Array[] = [];
  private speechStartMs: number | null = null;
  private voicedMs = 0;
  private lastVoiceMs = 0;
  private lastActivityMs = 0;
  private reprompts = 0;
  private speaking: Speaking | null = null;
  private thinking: AbortController | null = null;
  private marks = 0;
  private ended = false;
  /** When the callee's last turn ended, while the agent has not answered it yet (the filler's clock). */
  private waitingSinceMs: number | null = null;
  private rate: AgentContext["rate"] = 8000;
  /** Token and audio figures of the call, for its cost. */
  readonly usage = { inputTokens: 0, outputTokens: 0, sttSeconds: 0, ttsSeconds: 0 };

  constructor(
    readonly conversation: Conversation,
    private readonly engines: Engines,
    private readonly settings: TurnSettings = DEFAULT_TURN_SETTINGS,
  ) {}

  async onStart(ctx: AgentContext, controls: AgentControls) {
    this.c = controls;
    this.rate = ctx.rate;
    const greeting = this.conversation.greeting;
    if (greeting) {
      this.conversation.said(greeting);
      await this.speak([greeting], true, false);
    } else this.reply(null);
  }

  onAudio(frame: AudioFrame) {
    if (this.ended) return;
    if (frame.voiced) {
      if (this.speaking && !this.speaking.last) this.bargeIn(frame.atMs);
      if (this.thinking) {
        // They went on talking: the reply being prepared answers words they had not finished.
        this.thinking.abort();
        this.thinking = null;
      }
      this.speechStartMs ??= frame.atMs;
      this.voicedMs += 20;
      this.lastVoiceMs = frame.atMs;
      this.lastActivityMs = frame.atMs;
      this.utterance.push(frame.samples);
      return;
    }
    if (this.speechStartMs !== null) {
      this.utterance.push(frame.samples);
      if (frame.atMs - this.lastVoiceMs >= this.settings.endOfTurnMs) this.endOfTurn(frame.atMs);
      return;
    }
    // A slow reply: a short filler, once per turn, so the line does not sound dead.
    if (this.thinking && !this.speaking && this.waitingSinceMs !== null && this.settings.fillerAfterMs > 0) {
      if (frame.atMs - this.waitingSinceMs >= this.settings.fillerAfterMs) {
        this.waitingSinceMs = null;
        void this.speak([this.settings.fillerText], false, false);
      }
      return;
    }
    if (!this.speaking && !this.thinking && frame.atMs - this.lastActivityMs >= this.settings.repromptAfterMs) {
      this.lastActivityMs = frame.atMs;
      if (this.reprompts++ < this.settings.maxReprompts) {
        this.conversation.said(this.settings.repromptText);
        void this.speak([this.settings.repromptText], true, false);
      } else void this.goodbye(this.settings.goodbyeText, "callee_silent");
    }
  }

  onMark(name: string) {
    const s = this.speaking;
    const text = s?.byMark.get(name);
    if (!s || text === undefined || !this.c) return;
    s.byMark.delete(name);
    s.heard.push(text);
    this.completeIfHeard();
  }

  /** Once all of a complete reply has been heard: its turn goes to the transcript, and a last reply ends the call. */
  private completeIfHeard() {
    const s = this.speaking;
    if (!s || s.byMark.size || !s.complete || !this.c) return;
    this.c.log({ role: "agent", text: s.heard.join(" "), startMs: s.startMs, endMs: this.c.now() });
    this.speaking = null;
    this.lastActivityMs = this.c.now();
    if (s.last) this.hangup();
  }

  onEnd() {
    this.ended = true;
    this.thinking?.abort();
  }

  outcome(): AgentOutcome {
    return { gathered: { ...this.conversation.gathered }, disposition: this.conversation.disposition, usage: { ...this.usage } };
  }

  private hangup() {
    if (this.ended) return;
    this.ended = true;
    this.c?.hangup("agent_hangup");
  }

  private bargeIn(atMs: number) {
    const s = this.speaking!;
    this.c!.clear();
    this.thinking?.abort();
    this.thinking = null;
    const heard = s.heard.join(" ");
    this.conversation.interrupted(heard);
    this.c!.log({ role: "agent", text: heard, startMs: s.startMs, endMs: atMs, interrupted: true });
    this.speaking = null;
  }

  private endOfTurn(atMs: number) {
    const samples = concat(this.utterance);
    const start = this.speechStartMs!;
    const long = this.voicedMs >= this.settings.minSpeechMs;
    this.utterance = [];
    this.speechStartMs = null;
    this.voicedMs = 0;
    if (long) {
      this.waitingSinceMs = atMs;
      this.reply({ samples, startMs: start, endMs: atMs - this.settings.endOfTurnMs });
    }
  }

  /** Transcribes the callee's turn (none: the model opens the call) and speaks the model's reply as it streams. */
  private reply(turn: { samples: Int16Array; startMs: number; endMs: number } | null) {
    const thinking = new AbortController();
    this.thinking = thinking;
    void (async () => {
      try {
        if (turn) {
          this.usage.sttSeconds += turn.samples.length / this.rate;
          const text = (await this.engines.stt.transcribe({ samples: turn.samples, rate: this.rate }, thinking.signal)).trim();
          if (thinking.signal.aborted) return;
          if (!text) {
            // Noise, not words: nothing to answer (a filler already playing is the whole reply).
            this.thinking = null;
            this.finishReply(false);
            return;
          }
          this.reprompts = 0;
          this.c!.log({ role: "callee", text, startMs: turn.startMs, endMs: turn.endMs });
          this.conversation.heard(text);
        }
        const gen = agentReply(this.conversation, this.engines.model, thinking.signal);
        let ended = false;
        for (;;) {
          const r = await gen.next();
          if (thinking.signal.aborted) return;
          if (r.done) {
            ended = r.value.ended;
            this.usage.inputTokens += r.value.inputTokens;
            this.usage.outputTokens += r.value.outputTokens;
            break;
          }
          if (r.value.type === "sentence") {
            this.waitingSinceMs = null;
            await this.speak([r.value.text], false, false);
          }
        }
        if (thinking.signal.aborted) return;
        this.thinking = null;
        this.finishReply(ended);
      } catch (err) {
        if (thinking.signal.aborted) return;
        this.thinking = null;
        log("error", "voice_agent_error", { error: String((err as Error)?.message ?? err), node: this.conversation.nodeId });
        await this.goodbye(this.settings.errorText, "error");
      }
    })();
  }

  /** The reply's last sentence is queued: it is complete once heard (and the call ends then, if it was the last). */
  private finishReply(last: boolean) {
    const s = this.speaking;
    if (!s) {
      if (last) this.hangup();
      return;
    }
    s.complete = true;
    s.last = last;
    this.completeIfHeard();
  }

  /** Synthesizes and queues sentences, each followed by a mark; `complete`: nothing more follows in this reply. */
  private async speak(sentences: string[], complete: boolean, last: boolean) {
    for (const text of sentences) {
      const speech = await this.engines.tts.synthesize(text, this.thinking?.signal);
      if (this.ended) return;
      this.usage.ttsSeconds += speech.samples.length / speech.rate;
      this.speaking ??= { byMark: new Map(), heard: [], startMs: this.c!.now(), complete: false, last: false };
      const mark = `say-${++this.marks}`;
      this.speaking.byMark.set(mark, text);
      this.c!.say(speech.samples, speech.rate);
      this.c!.mark(mark);
    }
    if (complete) {
      this.speaking!.complete = true;
      this.speaking!.last = last;
    }
  }

  /** Says a last sentence and hangs up once it is heard; hangs up at once when even that cannot be said. */
  private async goodbye(text: string, why: string) {
    log("info", "voice_agent_goodbye", { why, node: this.conversation.nodeId });
    try {
      this.conversation.said(text);
      await this.speak([text], true, true);
    } catch (err) {
      log("error", "voice_agent_goodbye_failed", { error: String((err as Error)?.message ?? err) });
      this.hangup();
    }
  }
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
