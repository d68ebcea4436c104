// The agent's voice: synthesizes and queues sentences (a streaming engine's audio as it comes), each followed by a
// mark, and keeps what is being said: each sentence by its mark with when it starts playing on the call's audio
// clock and how long it lasts, and the sentences heard so far. At a barge-in it says what the callee heard, down to
// the word (heard.ts): the sentences whose marks came back, and of the one playing, the words its audio had played
// by the cut. The play clock mirrors the session's pacer: audio plays back to back from when it is queued.
import { heardWords, resumeAtMs, type WordTime } from "./heard";
import { once, type Speech, type TextToSpeech } from "./speech";
import type { AgentControls } from "./voice-agent";

type Sentence = { text: string; startMs: number; durMs: number; words: WordTime[] | null; audio: Speech[] };

/** Paused while the callee may be taking the turn: the sentences not heard (the first from `fromMs` into it). */
type Paused = { at: number; rest: Array<{ sentence: Sentence; fromMs: number }> };

/** What the agent is saying: the sentences by mark, those heard so far, and whether the reply is complete. */
export type Speaking = { byMark: Map<string, Sentence>; heard: string[]; startMs: number; complete: boolean; last: boolean };

export type SpeakOptions = { complete: boolean; last: boolean; filler?: boolean; signal?: AbortSignal; audio?: Speech | null };

export class Speaker {
  speaking: Speaking | null = null;
  marks = 0;
  /** When the audio queued so far has all played, on the call's audio clock. */
  private playEnd = 0;
  /** When the last mark came back (the sentence after it cannot have started earlier). */
  private lastHeardAt = 0;
  /** The first audio of the current reply was queued (for the turn's timing): called once per reply. */
  onFirstAudio: (() => void) | null = null;
  private paused: Paused | null = null;

  constructor(
    private readonly o: {
      controls: () => AgentControls;
      tts: TextToSpeech;
      ended: () => boolean;
      usage: { ttsSeconds: number };
      /** A complete reply was queued: it ends (or the call ends) once heard. */
      completed: () => void;
      hangup: () => void;
    },
  ) {}

  /** Whether queued speech has not all been heard. */
  get playing(): boolean {
    return !!this.speaking && (this.speaking.byMark.size > 0 || !!this.paused);
  }

  /** Whether the agent stopped for the callee's voice and waits to learn whether they take the turn. */
  get isPaused(): boolean {
    return this.paused !== null;
  }

  /**
   * The callee's voice over the agent (the caller cleared the audio at `now`): what was not heard is held, with where
   * the sentence playing was cut; more of the reply that comes meanwhile is held too. `commit` or `resume` follows.
   */
  pause(now: number): void {
    const s = this.speaking;
    if (!s || this.paused) return;
    const rest: Paused["rest"] = [];
    for (const sentence of s.byMark.values()) {
      const start = Math.max(sentence.startMs, this.lastHeardAt);
      rest.push({ sentence, fromMs: rest.length ? 0 : Math.min(sentence.durMs, Math.max(0, now - start)) });
    }
    s.byMark.clear();
    this.paused = { at: now, rest };
    this.playEnd = now;
  }

  /** A false interruption (a sound, a backchannel): the sentence goes on from the first word not heard in full. */
  resume(): void {
    const p = this.paused;
    const s = this.speaking;
    this.paused = null;
    if (!p || !s) return;
    const c = this.o.controls();
    for (const { sentence, fromMs } of p.rest) {
      const from = fromMs ? resumeAtMs(sentence.text, fromMs, sentence.durMs, sentence.words) : 0;
      const at = Math.max(c.now(), this.playEnd);
      // The sentence's start as if it had played whole: a later cut is measured within it as before.
      const again: Sentence = { ...sentence, startMs: at - from };
      let skip = from;
      for (const piece of sentence.audio) {
        const ms = (piece.samples.length / piece.rate) * 1000;
        if (skip >= ms) {
          skip -= ms;
          continue;
        }
        const samples = piece.samples.subarray(Math.floor((skip / 1000) * piece.rate));
        skip = 0;
        c.say(samples, piece.rate);
        this.playEnd = Math.max(c.now(), this.playEnd) + (samples.length / piece.rate) * 1000;
      }
      const mark = `say-${++this.marks}`;
      s.byMark.set(mark, again);
      c.mark(mark);
    }
  }

  /** While paused: the audio and words of the reply not heard (what a barge-in now would cut), for the turn's timing. */
  unheard(): { ms: number; words: string } | null {
    if (!this.paused) return null;
    let ms = 0;
    const words: string[] = [];
    for (const { sentence, fromMs } of this.paused.rest) {
      ms += Math.max(0, sentence.durMs - fromMs);
      const all = sentence.text.split(/\s+/).filter(Boolean);
      const heard = fromMs ? heardWords(sentence.text, fromMs, sentence.durMs, sentence.words).split(/\s+/).filter(Boolean).length : 0;
      words.push(...all.slice(heard));
    }
    return { ms, words: words.join(" ") };
  }

  /** The callee took the turn: what they heard of the reply (see `cut`), and nothing of it plays again. */
  commit(): string {
    const p = this.paused;
    const s = this.speaking;
    this.paused = null;
    this.speaking = null;
    if (!p || !s) return "";
    const heard = [...s.heard];
    const first = p.rest[0];
    if (first?.fromMs) {
      const words = heardWords(first.sentence.text, first.fromMs, first.sentence.durMs, first.sentence.words);
      if (words) heard.push(words);
    }
    return heard.join(" ");
  }

  /** A mark came back (or its audio played by the clock): its sentence was heard. False for a mark not ours. */
  heard(name: string, now: number): boolean {
    const s = this.speaking;
    const sentence = s?.byMark.get(name);
    if (!s || !sentence) return false;
    s.byMark.delete(name);
    s.heard.push(sentence.text);
    this.lastHeardAt = now;
    return true;
  }

  /**
   * The callee cut the agent off at `now` (its audio was cleared then): what they heard of the reply. Sentences
   * whose marks came back, then of the sentence playing the words played by then; what follows was never heard.
   */
  cut(now: number): string {
    this.pause(now);
    return this.commit();
  }

  /** Resolves once all the agent queued has been heard (at most 30 s on); those words become their turn, before the action's. */
  async untilHeard(): Promise<void> {
    for (let waited = 0; waited < 30_000 && !this.o.ended() && this.playing; waited += 20) await new Promise((r) => setTimeout(r, 20));
    const s = this.speaking;
    const c = this.o.controls();
    if (!s?.heard.length || s.byMark.size || this.paused) return;
    c.log({ role: "agent", text: s.heard.join(" "), startMs: s.startMs, endMs: c.now() });
    s.heard = [];
    s.startMs = c.now();
  }

  /** The audio was cleared without a cut (an answering machine, a transfer): nothing more plays. */
  forget(now: number): void {
    this.speaking = null;
    this.paused = null;
    this.playEnd = now;
  }

  /**
   * Synthesizes and queues sentences, each followed by a mark. `complete`: nothing more follows in this reply;
   * `signal`: the reply was cut off (nothing more of it is queued); `audio`: a recording that says the (one)
   * sentence, played as it is.
   */
  async speak(sentences: string[], o: SpeakOptions): Promise<void> {
    const c = this.o.controls();
    const tts = this.o.tts;
    for (const text of sentences) {
      const pieces: AsyncIterable<Speech> = o.audio
        ? once(Promise.resolve(o.audio))
        : tts.stream
          ? tts.stream(text, o.signal)
          : once(tts.synthesize(text, o.signal));
      let sentence: Sentence | null = null;
      for await (const speech of pieces) {
        if (this.o.ended() || o.signal?.aborted) return;
        const ms = (speech.samples.length / speech.rate) * 1000;
        if (!o.audio) this.o.usage.ttsSeconds += ms / 1000;
        const now = c.now();
        this.speaking ??= { byMark: new Map(), heard: [], startMs: now, complete: false, last: false };
        const at = Math.max(now, this.playEnd);
        sentence ??= { text, startMs: at, durMs: 0, words: null, audio: [] };
        sentence.audio.push(speech);
        // Word timings are per piece: shifted to the sentence's start.
        if (speech.words?.length) {
          const offset = sentence.durMs;
          sentence.words = [...(sentence.words ?? []), ...speech.words.map((w) => ({ word: w.word, endMs: w.endMs + offset }))];
        }
        sentence.durMs += ms;
        // Paused: held until the callee's words decide (resumed, or dropped with the reply).
        if (this.paused) continue;
        this.playEnd = at + ms;
        // Before `say`: it may send the first frame at once, and the reply's timing waits for that frame.
        this.onFirstAudio?.();
        this.onFirstAudio = null;
        c.say(speech.samples, speech.rate);
      }
      if (!sentence || this.o.ended() || o.signal?.aborted) continue;
      if (this.paused) {
        this.paused.rest.push({ sentence, fromMs: 0 });
        continue;
      }
      const mark = `say-${++this.marks}`;
      this.speaking!.byMark.set(mark, sentence);
      c.mark(mark);
    }
    if (o.complete && this.speaking) {
      this.speaking.complete = true;
      this.speaking.last = o.last;
      this.o.completed();
    } else if (o.complete && o.last) this.o.hangup();
  }
}
