// The voice agent that runs an agent's graph on a call: it listens (an energy gate finds the callee's utterances and
// the end of their turn), transcribes each utterance (streamed while they speak where the provider can), asks the
// model at the current node, and speaks the reply sentence by sentence as it streams. The callee talking over it
// stops its speech within a frame (barge-in) and only what was heard stays in the history. A callee who stays silent
// is asked once whether they are still there, then the call ends politely; a failing or silent model or speech engine
// ends it politely too, never with dead air past `maxWaitMs` (the ending itself: agent-ending.ts). An answering
// machine (the carrier's verdict, else edgedial's own detection, answering-machine.ts) is hung up on or gets the
// greeting after its beep, as the campaign chose.
//
// Turns are found on the audio clock (the frames' own times); the idle policy (filler, re-prompt, dead air) runs on
// the wall clock, on the session's ticks, so a stalled stream still gets its re-prompt and a burst of late frames is
// not silence. The conversation's state is saved at each stable point, and a call whose media came back after a
// restart goes on from it: a pending turn is answered, and a longer gap gets a short apology. Actions (tools, a
// transfer, keys) are the action runner's; the callee's key presses are a turn and barge in like speech.
import { log } from "../lib/log";
import { isMachine } from "../lib/answered-by";
import type { AgentContext, AgentControls, AgentOutcome, AudioFrame, VoiceAgent, VoicemailAction } from "./voice-agent";
import type { ChatModel } from "./chat";
import type { Conversation, ConversationState } from "./graph";
import type { Speech, SpeechStream, SpeechToText, TextToSpeech } from "./speech";
import { Speaker } from "./speaker";
import { transcribeTurn } from "./transcribe";
import { agentReply } from "./turn";
import { ActionRunner, type ToolAccess } from "./action-runner";
import type { Action } from "./actions";
import type { ToolCall } from "./chat";
import { Keypad } from "./keypad";
import { isBackchannel, stopsAgent } from "./backchannel";
import { DEFAULT_TURN_SETTINGS, type TurnSettings } from "./turn-settings";
import { IdlePolicy, silentNote } from "./idle-policy";
import { AgentEnding } from "./agent-ending";
import { AnsweringMachine } from "./answering-machine";
import { TurnDetector, type Utterance } from "./turn-detector";
import { TurnEnds } from "./turn-ends";
import { TurnTimings } from "./turn-timing";

export { DEFAULT_TURN_SETTINGS, type TurnSettings } from "./turn-settings";

export type Engines = { model: ChatModel; stt: SpeechToText; tts: TextToSpeech; failovers?: import("./failover").FailoverLog };

type CalleeTurn = Utterance & { stream: SpeechStream | null };

/** What the agent saves besides the conversation, for a call that goes on after a restart. */
type SavedState = { conversation: ConversationState; reprompts: number; firstTurn: boolean; marks: number };

export class ConversationAgent implements VoiceAgent {
  readonly wantsGreetingAudio = true;
  private c: AgentControls | null = null;
  private listening: SpeechStream | null = null;
  private readonly turns: TurnDetector;
  private readonly ends: TurnEnds; // models that end the caller's turn sooner; a reply started ahead (turn-ends.ts)
  private readonly idle: IdlePolicy;
  private readonly voice: Speaker;
  private thinking: AbortController | null = null;
  private readonly ending: AgentEnding; // the call's end: goodbye, dead air's last resort, why (agent-ending.ts)
  /** A turn being answered whose words the model has not heard yet: merged into the next if they go on talking. */
  private carried: CalleeTurn | null = null;
  private firstTurn = true;
  private voicemail: VoicemailAction = "hang_up";
  private rate: AgentContext["rate"] = 8000;
  /** What the call opens with (and what a voicemail message says): the contact's override, else the graph's greeting. */
  private opening: { text: string; audio: Speech | null } | null = null;
  readonly usage = { inputTokens: 0, outputTokens: 0, sttSeconds: 0, ttsSeconds: 0 }; // the call's token and audio figures, for its cost
  private readonly actions: ActionRunner;
  private readonly machine: AnsweringMachine; // once one took the call, only its audio matters (answering-machine.ts)
  private readonly keypad = new Keypad();
  private handingOver = false; // a transfer is under way: the callee's audio and keys wait
  private readonly timing = new TurnTimings(() => this.c!);

  constructor(
    readonly conversation: Conversation,
    private readonly engines: Engines,
    private readonly settings: TurnSettings = DEFAULT_TURN_SETTINGS,
    access: ToolAccess | null = null,
  ) {
    this.turns = new TurnDetector(settings.endOfTurnMs);
    this.ends = new TurnEnds(engines, this.turns, {
      now: () => (this.ending.ended || !this.c ? null : this.c.now()),
      endOfTurn: (u) => this.endOfTurn(u),
      request: () => (this.thinking || this.voice.speaking || this.ending.ended ? null : this.conversation.request()),
    });
    this.idle = new IdlePolicy(settings);
    this.timing.watch(engines.failovers, () => this.idle.failingOver());
    this.voice = new Speaker({
      controls: () => this.c!,
      tts: this.ends.voice,
      ended: () => this.ending.ended,
      usage: this.usage,
      completed: () => this.completeIfHeard(),
      hangup: () => this.ending.hangup(),
    });
    this.ending = new AgentEnding({
      controls: () => this.c,
      conversation,
      voice: this.voice,
      idle: this.idle,
      settings,
      stopListening: () => this.listening?.abort(),
    });
    this.machine = new AnsweringMachine(settings, { controls: () => this.c!, voice: this.voice, hangup: () => this.ending.hangup() });
    this.actions = new ActionRunner({
      controls: () => this.c!,
      conversation,
      model: engines.model,
      tts: engines.tts,
      access,
      untilHeard: () => this.voice.untilHeard(),
    });
  }

  async onStart(ctx: AgentContext, controls: AgentControls) {
    this.c = controls;
    this.rate = ctx.rate;
    this.voicemail = ctx.voicemail ?? "hang_up";
    this.idle.lastActivity = controls.wallNow();
    const text = ctx.greeting ?? this.conversation.greeting;
    this.opening = text ? { text, audio: ctx.greetingAudio ?? null } : null;
    if (ctx.resumed && this.restore(ctx.resumed.state)) return this.resume(ctx.resumed.gapMs);
    this.machine.start(ctx, controls.now()); // its message's variables; who answered is judged on an outbound call
    // The carrier's detection already said machine: no conversation at all.
    if (isMachine(ctx.answeredBy)) return this.machineAnswered(controls.now(), `the carrier reported ${ctx.answeredBy}`);
    if (this.opening) {
      this.conversation.said(this.opening.text);
      await this.voice.speak([this.opening.text], { complete: true, last: false, audio: this.opening.audio });
    } else this.reply(null);
  }

  onAudio(frame: AudioFrame) {
    if (this.ending.ended || this.handingOver) return;
    if (this.machine.answered) return this.machine.audio(frame);
    const machine = this.machine.judge(frame, this.listening?.words?.()); // who answered, until decided
    if (machine) return this.machineAnswered(machine.atMs, machine.reason);
    if (frame.voiced) {
      // A reply being prepared (not yet spoken) answers words they had not finished; one being spoken waits for `overAgent`.
      if (this.thinking && (this.carried || !this.voice.speaking)) {
        this.thinking.abort();
        this.thinking = null;
        this.idle.dueSince = null;
        this.resumeCarried();
      }
      this.idle.lastActivity = this.c!.wallNow();
    }
    const ev = this.turns.push(frame.samples, frame.atMs, frame.voiced);
    if (ev?.kind === "start") this.listen();
    if (this.turns.active || ev) this.listening?.push(frame.samples);
    if (frame.voiced) this.overAgent();
    if (ev?.kind === "end") this.endOfTurn(ev.utterance);
    else this.ends.frame(frame.atMs, this.rate);
  }

  /** A live transcription for the utterance that starts; a model that detects the turn's end ends it (Flux). */
  private listen() {
    this.listening = this.ends.watch(this.engines.stt.open?.(this.rate) ?? null, () => this.listening);
  }

  /** The callee's voice over the agent pauses it (audio cleared) once `stopsAgent` says so; their words then decide. */
  private overAgent() {
    const s = this.voice.speaking;
    if (!s || s.last || this.voice.isPaused || !stopsAgent(this.turns.voicedMs, this.settings.interruptMinMs, this.listening?.words?.())) return;
    this.c!.clear();
    this.voice.pause(this.c!.now());
  }

  /** The idle policy, on the wall clock: dead air, a slow reply's filler, a silent callee's re-prompt and goodbye. */
  onTick(wall: number) {
    if (this.ending.ended || this.machine.answered || !this.c) return;
    const keys = this.keypad.tick(wall);
    if (keys) return this.pressed(keys);
    if (this.turns.active) return;
    switch (this.idle.tick(wall, { speaking: !!this.voice.speaking, thinking: !!this.thinking, playing: this.voice.playing })) {
      case "dead_air":
        return this.gaveUp(wall);
      case "filler":
        void this.voice.speak([this.settings.fillerText], { complete: false, last: false, filler: true });
        return;
      case "reprompt":
        this.conversation.said(this.settings.repromptText);
        void this.voice.speak([this.settings.repromptText], { complete: true, last: false });
        return;
      case "goodbye":
        this.ending.endNote = silentNote(this.settings);
        void this.ending.goodbye(this.settings.goodbyeText, "callee_silent");
        return;
    }
  }

  onMark(name: string) {
    if (this.c && this.voice.heard(name, this.c.now())) this.completeIfHeard();
  }

  /**
   * The carrier's detection answered late (Telnyx, Vonage, Plivo report it while the call runs). Heeded only until
   * the callee has spoken: by then the agent judged their first words itself, and a person is never hung up on.
   */
  onMachine(answeredBy: string) {
    if (this.ending.ended || this.machine.answered || !this.c || !this.firstTurn || !isMachine(answeredBy)) return;
    this.machineAnswered(this.c.now(), `the carrier reported ${answeredBy}`);
  }

  /** A key press is the callee's activity: it barges in like speech, and the keys become a turn (see Keypad). */
  onDtmf(digit: string, _atMs: number) {
    if (this.ending.ended || this.machine.answered || this.handingOver || !this.c) return;
    this.idle.lastActivity = this.c.wallNow();
    if (this.voice.speaking && !this.voice.speaking.last) this.bargeIn();
    const keys = this.keypad.press(digit, this.c.wallNow(), this.conversation.dtmfChoices());
    if (keys) this.pressed(keys);
  }

  onEnd() {
    this.ending.ended = true;
    this.thinking?.abort();
    this.listening?.abort();
    this.ends.stop();
  }

  learnLine(clip: Speech & { text: string }): void {
    this.engines.stt.learn?.(clip);
  }

  outcome(): AgentOutcome {
    const c = this.conversation;
    const done = { disposition: c.disposition, note: this.ending.note, toolCalls: [...this.actions.records], nodes: [...c.path], amd: this.machine.record() };
    return { gathered: { ...c.gathered }, usage: { ...this.usage }, ...done };
  }

  /** Once all of a complete reply has been heard: its turn goes to the transcript, and a last reply ends the call. */
  private completeIfHeard() {
    const s = this.voice.speaking;
    if (!s || s.byMark.size || !s.complete || !this.c || this.voice.isPaused) return;
    this.c.log({ role: "agent", text: s.heard.join(" "), startMs: s.startMs, endMs: this.c.now(), timing: this.timing.take() });
    this.voice.speaking = null;
    this.idle.lastActivity = this.c.wallNow();
    if (s.last) this.ending.hangup();
    else this.save();
  }

  /** The state at a stable point (a turn heard, a reply heard or cut off), for the call to go on from after a restart. */
  private save() {
    const state: SavedState = { conversation: this.conversation.state(), reprompts: this.idle.reprompts, firstTurn: this.firstTurn, marks: this.voice.marks };
    this.c?.save(state);
  }

  private restore(saved: unknown): boolean {
    const s = saved as Partial<SavedState> | null;
    if (!s?.conversation || !this.conversation.restore(s.conversation)) return false;
    this.idle.reprompts = Number(s.reprompts) || 0;
    this.firstTurn = s.firstTurn === true;
    // Mark names go on from where they were, so none is mistaken for one sent before the restart.
    this.voice.marks = Number(s.marks) || 0;
    return true;
  }

  /** The media came back: a turn left unanswered is answered now; after a longer gap the callee hears an apology first. */
  private resume(gapMs: number) {
    const pending = this.conversation.history.at(-1)?.role === "user";
    if (gapMs >= this.settings.resumeAfterMs) void this.voice.speak([this.settings.resumeText], { complete: !pending, last: false, filler: true });
    if (pending) {
      this.idle.awaitReply(this.c!.wallNow());
      this.reply(null);
    }
  }

  /** The callee cut the agent off (a key, or their words after a pause): what they heard of the reply (to the word) stays. */
  private bargeIn() {
    const c = this.c!;
    const startMs = this.voice.speaking!.startMs;
    const at = c.now();
    if (!this.voice.isPaused) {
      c.clear();
      this.voice.pause(at);
    }
    this.thinking?.abort();
    this.thinking = null;
    const timing = this.timing.take(this.voice.unheard());
    const heard = this.voice.commit();
    this.conversation.interrupted(heard);
    c.log({ role: "agent", text: heard, startMs, endMs: at, interrupted: true, timing });
    this.save();
  }

  /** A typed turn (a web call's page): it barges in like speech and is answered as heard words, on the same graph. */
  onText(text: string) {
    if (this.ending.ended || this.machine.answered || this.handingOver || !this.c) return;
    this.idle.lastActivity = this.c.wallNow(); // typing (an empty text) is the caller's activity too, not a turn
    if (!text) return;
    if (this.voice.speaking && !this.voice.speaking.last) this.bargeIn();
    this.takeTurn(text, () => this.conversation.heard(text));
  }

  /** Keys the callee pressed, as their turn: a reply being prepared gives way to it (its words stay in the history). */
  private pressed(keys: string) {
    this.takeTurn(`[pressed ${keys.split("").join(" ")}]`, () => this.conversation.pressed(keys));
  }

  /** A turn that needs no transcription (keys, typed words): logged as the callee's, added to the history, answered. */
  private takeTurn(logged: string, addToHistory: () => void) {
    const c = this.c!;
    this.thinking?.abort();
    this.thinking = null;
    this.carried?.stream?.abort();
    this.carried = null;
    this.firstTurn = false;
    this.idle.reprompts = 0;
    const at = c.now();
    c.log({ role: "callee", text: logged, startMs: at, endMs: at });
    addToHistory();
    this.save();
    this.idle.awaitReply(c.wallNow());
    this.reply(null);
  }

  /** The model's action, carried out; a tool's request pauses the dead-air clock and gets its filler. */
  private readonly act = async (action: Action, call: ToolCall) => {
    const timed = action.type === "http";
    if (timed) this.idle.actionStarted(this.c!.wallNow());
    this.handingOver = action.type === "transfer";
    try {
      return await this.actions.run(action, call);
    } finally {
      this.handingOver = false;
      if (timed) this.idle.actionDone(this.c!.wallNow());
    }
  };

  /** The call was handed to a person: the agent says and hears nothing more; the session ends the call as transferred. */
  private transferred() {
    [this.thinking, this.voice.speaking] = [null, null];
    this.ending.transferred();
  }

  /** The callee resumed before their last turn was transcribed: that turn's audio starts this utterance. */
  private resumeCarried() {
    const t = this.carried;
    this.carried = null;
    if (!t) return;
    t.stream?.abort();
    if (!this.turns.carry(t)) return;
    this.listen();
    this.listening?.push(t.samples);
  }

  private endOfTurn(u: Utterance) {
    const turn: CalleeTurn = { ...u, stream: this.listening };
    this.listening = null;
    const over = this.voice.isPaused || (!!this.voice.speaking && !!turn.stream?.words); // paused, or a backchannel so far
    this.timing.begin(u.endMs, over);
    if (over) return void this.heardOver(turn);
    if (turn.voicedMs < this.settings.minSpeechMs) {
      turn.stream?.abort();
      return;
    }
    this.idle.awaitReply(this.c!.wallNow());
    this.reply(turn);
  }

  /** The callee's words over the agent: a backchannel (or none) lets it go on; anything else takes the turn. */
  private async heardOver(turn: CalleeTurn) {
    let text = "";
    try {
      text = (await this.transcribe(turn, new AbortController().signal)).trim();
    } catch (err) {
      log("warning", "voice_agent_interruption_unheard", { error: String((err as Error)?.message ?? err) });
    }
    if (this.ending.ended || !this.voice.speaking) return;
    this.usage.sttSeconds += turn.samples.length / this.rate;
    if (isBackchannel(text)) {
      if (text) this.c!.log({ role: "callee", text, startMs: turn.startMs, endMs: turn.endMs });
      return this.voice.resume();
    }
    this.bargeIn();
    this.idle.awaitReply(this.c!.wallNow());
    this.reply(turn, text);
  }

  /** Transcribes the callee's turn (none: the model opens the call) and speaks the model's reply as it streams. */
  private reply(turn: CalleeTurn | null, known?: string) {
    const thinking = new AbortController();
    this.thinking = thinking;
    const signal = thinking.signal;
    this.carried = turn;
    void (async () => {
      try {
        if (turn) {
          if (known === undefined) this.usage.sttSeconds += turn.samples.length / this.rate;
          const text = known ?? (await this.transcribe(turn, signal)).trim();
          if (signal.aborted) return;
          this.carried = null;
          if (!text) {
            // Noise, not words: nothing to answer (a filler already playing is the whole reply).
            this.thinking = null;
            this.idle.dueSince = null;
            this.finishReply(false);
            return;
          }
          this.idle.reprompts = 0;
          this.c!.log({ role: "callee", text, startMs: turn.startMs, endMs: turn.endMs });
          const who = this.firstTurn ? this.machine.firstWords(text, turn.endMs, turn.voicedMs) : { machine: null, heard: text };
          this.firstTurn = false;
          if (who.machine) {
            this.thinking = null;
            return this.machineAnswered(turn.endMs, who.machine);
          }
          this.conversation.heard(who.heard);
          this.save();
        }
        const gen = agentReply(this.conversation, this.timing.model(this.ends.model), signal, this.act);
        let ended = false;
        for (;;) {
          const r = await gen.next();
          if (signal.aborted) return;
          if (r.done) {
            ended = r.value.ended;
            this.usage.inputTokens += r.value.inputTokens;
            this.usage.outputTokens += r.value.outputTokens;
            if (r.value.transferred) return this.transferred();
            break;
          }
          if (r.value.type === "sentence") {
            this.idle.waitingSince = null;
            this.timing.sentence(this.voice);
            await this.voice.speak([r.value.text], { complete: false, last: false, signal });
            if (signal.aborted) return;
            this.idle.dueSince = null;
          }
        }
        if (signal.aborted) return;
        this.thinking = null;
        this.idle.dueSince = null;
        this.finishReply(ended);
      } catch (err) {
        if (signal.aborted) return;
        this.thinking = null;
        const message = String((err as Error)?.message ?? err);
        log("error", "voice_agent_error", { error: message, node: this.conversation.nodeId });
        this.ending.note = `The agent ended the call after a provider failure: ${message.slice(0, 300)}`;
        await this.ending.goodbye(this.settings.errorText, "provider_failure");
      }
    })();
  }

  private async transcribe(turn: CalleeTurn, signal: AbortSignal): Promise<string> {
    const text = await transcribeTurn(this.engines.stt, { samples: turn.samples, rate: this.rate }, turn.stream, signal);
    this.timing.mark("stt_final_ms");
    return text;
  }

  /** The reply's last sentence is queued: it is complete once heard (and the call ends then, if it was the last). */
  private finishReply(last: boolean) {
    const s = this.voice.speaking;
    if (!s) {
      if (last) this.ending.hangup();
      return;
    }
    s.complete = true;
    s.last = last;
    this.completeIfHeard();
  }

  /** Nothing came within the dead-air limit: a reply being prepared gives way (agent-ending.ts says what follows). */
  private gaveUp(wall: number) {
    const waiting = this.thinking !== null;
    this.thinking?.abort();
    this.thinking = null;
    this.ending.gaveUp(wall, waiting);
  }

  /** An answering machine took the call: recorded at once, then hung up on or left the greeting, as configured. */
  private machineAnswered(atMs: number, how: string) {
    this.thinking?.abort();
    this.thinking = null;
    this.idle.dueSince = null;
    this.ending.reason = "voicemail";
    const { note, leaving } = this.machine.take(atMs, how, this.voicemail, this.opening);
    this.ending.note = note;
    if (!leaving) this.ending.hangup();
  }
}
