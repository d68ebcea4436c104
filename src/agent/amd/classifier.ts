// Who answered the call (answering-machine detection, second version, issue 42), judged on the callee's audio as it
// arrives and on the words the speech engine gives: a person, a machine's greeting, a beep, an IVR menu, a call
// screening service, a fax or modem tone, or silence, with the evidence (timings, keywords, tones) and when it was
// decided. The strongest cue of a person is a short opening ("Hello?") followed by a pause: they wait for the caller.
// A machine talks on past a person's opening, names itself, or beeps. When nothing decides within `maxDecideMs` the
// answer is a person: hanging up on a person is the costly error. Pure and incremental.
import { isBeep, type Tone, ToneTracker } from "../../lib/audio/tones";
import { keywordClass } from "./keywords";

export const AMD_CLASSES = ["human", "machine_greeting", "beep", "ivr_menu", "call_screening", "fax_tone", "silence"] as const;
export type AmdClass = (typeof AMD_CLASSES)[number];
/** The classes that are a machine to leave a message on (or hang up on). */
export const isMachineClass = (c: AmdClass) => c === "machine_greeting" || c === "beep";

export type AmdSettings = {
  /** A person's opening is at most this long (its pauses shorter than `pauseMs` bridged)... */
  humanMaxMs: number;
  /** ...and followed by this much quiet: they wait for the caller to speak. */
  pauseMs: number;
  /** Speech running on this long without such a pause is a machine's greeting. */
  machineSpeechMs: number;
  /** Once speech ran on that long, words naming an IVR menu or a screening service may still come this long. */
  keywordGraceMs: number;
  /** Nothing heard for this long from the answer: silence. */
  silenceMs: number;
  /** Undecided this long after the answer: a person (the safe answer). */
  maxDecideMs: number;
};

export const DEFAULT_AMD_SETTINGS: AmdSettings = {
  humanMaxMs: 3000,
  pauseMs: 800,
  machineSpeechMs: 3000,
  keywordGraceMs: 1500,
  silenceMs: 5000,
  maxDecideMs: 8000,
};

export type AmdEvidence = {
  /** When the callee's voice first came, ms after the answer (null: never). */
  firstVoiceMs: number | null;
  /** The longest stretch of speech (pauses under `pauseMs` bridged), ms. */
  longestSpeechMs: number;
  /** Voiced audio heard in all, ms. */
  voicedMs: number;
  /** The quiet that followed the opening, when it decided (ms). */
  pauseMs?: number;
  keyword?: string;
  /** Tones heard (frequency, ms after the answer). */
  tones: Array<{ freqHz: number; startMs: number; endMs: number }>;
};

export type AmdDecision = {
  cls: AmdClass;
  /** When it was decided, on the call's clock. */
  atMs: number;
  /** How long after the answer it was decided. */
  decideMs: number;
  reason: string;
  evidence: AmdEvidence;
};

/** What the run keeps of the detection: the decision and, on a machine, the beep's end and the message's start (ms after the answer). */
export type AmdRecord = AmdDecision & { beep_hz?: number | null; beep_end_ms?: number | null; message_ms?: number | null };

type Frame = { samples: Int16Array; atMs: number; voiced: boolean };

const near = (f: number, target: number, tol: number) => Math.abs(f - target) <= tol;
/** A fax machine's calling tone (CNG): 1100 Hz, 0.5 s on and 3 s off. */
const isCng = (t: Tone) => near(t.freqHz, 1100, 40) && t.endMs - t.startMs >= 300 && t.endMs - t.startMs <= 800;
/** A modem's or fax's answer tone: 2100 Hz for 2.6-4 s (one second of it is enough to tell). */
const ANSWER_TONE_MS = 1000;
const isAnswerTone = (t: Tone) => near(t.freqHz, 2100, 60);

const SPOKE_MS = 300;

export class AmdClassifier {
  private readonly tones: ToneTracker;
  private firstVoice: number | null = null;
  private spanStart: number | null = null; // the current stretch of speech
  private lastVoice: number | null = null;
  private longest = 0;
  private voiced = 0;
  private readonly heard: Tone[] = [];
  private text = "";
  private longSince: number | null = null; // when speech ran past machineSpeechMs (the decision waits for words)
  decision: AmdDecision | null = null;

  constructor(
    private readonly startMs: number,
    private readonly rate: number,
    private readonly s: AmdSettings = DEFAULT_AMD_SETTINGS,
  ) {
    this.tones = new ToneTracker(rate);
  }

  /** One frame of the callee's audio (`voiced`: the call's energy gate); the decision once there is one. */
  frame(f: Frame): AmdDecision | null {
    if (this.decision) return this.decision;
    for (const t of this.tones.push(f.samples, f.atMs)) {
      this.heard.push(t);
      const d = this.onTone(t, f.atMs);
      if (d) return d;
    }
    const tone = this.tones.current;
    if (tone && isAnswerTone(tone) && tone.endMs - tone.startMs >= ANSWER_TONE_MS)
      return this.decide("fax_tone", f.atMs, `a ${tone.freqHz} Hz answer tone (a modem or fax)`, {}, [tone]);
    // A tone's own frames are not speech.
    const speech = f.voiced && !tone;
    const at = f.atMs;
    if (speech) {
      const ms = (f.samples.length / this.rate) * 1000;
      this.voiced += ms;
      this.firstVoice ??= f.atMs;
      if (this.spanStart === null || (this.lastVoice !== null && f.atMs - this.lastVoice >= this.s.pauseMs)) this.spanStart = f.atMs;
      this.lastVoice = f.atMs + ms;
      this.longest = Math.max(this.longest, this.lastVoice - this.spanStart);
      if (this.lastVoice - this.spanStart >= this.s.machineSpeechMs) this.longSince ??= at;
    }
    // Long speech is a machine; which kind its words may still say (an IVR's "press one" comes late in its sentence).
    if (this.longSince !== null && at - this.longSince >= this.s.keywordGraceMs && !tone)
      return this.decide("machine_greeting", at, `${this.s.machineSpeechMs} ms of speech without a pause`, {});
    if (speech) return null;
    if (this.lastVoice !== null && this.spanStart !== null && at - this.lastVoice >= this.s.pauseMs && !tone) {
      const span = this.lastVoice - this.spanStart;
      if (span <= this.s.humanMaxMs)
        return this.decide("human", at, `a ${Math.round(span)} ms opening, then a pause`, { pauseMs: Math.round(at - this.lastVoice) });
    }
    if (this.firstVoice === null && this.heard.length === 0 && !tone && at - this.startMs >= this.s.silenceMs)
      return this.decide("silence", at, `nothing heard for ${this.s.silenceMs} ms`, {});
    if (at - this.startMs >= this.s.maxDecideMs) return this.decide("human", at, "undecided: taken as a person", {});
    return null;
  }

  /** Undecided when the callee's first turn was heard without a machine's words: a person (never judged again). */
  person(atMs: number, reason: string): AmdDecision {
    return this.decision ?? this.decide("human", atMs, reason, {});
  }

  /** The words the speech engine heard so far (interim or final), at `atMs`: keywords decide at once. */
  words(text: string, atMs: number): AmdDecision | null {
    if (this.decision) return this.decision;
    this.text = text;
    const k = keywordClass(text, this.longest);
    if (!k) return null;
    return this.decide(k.cls, atMs, `the words "${k.keyword}"`, { keyword: k.keyword });
  }

  private onTone(t: Tone, atMs: number): AmdDecision | null {
    if (isAnswerTone(t) && t.endMs - t.startMs >= 500) return this.decide("fax_tone", atMs, `a ${t.freqHz} Hz answer tone`, {});
    if (isCng(t) && !this.spoke) return this.decide("fax_tone", atMs, `a ${t.freqHz} Hz calling tone (fax)`, {});
    if (!isBeep(t)) return null;
    // A greeting before the beep was a machine's; a beep alone is a mailbox ready to record.
    const cls = this.spoke ? "machine_greeting" : "beep";
    return this.decide(cls, atMs, `a ${t.freqHz} Hz beep of ${Math.round(t.endMs - t.startMs)} ms`, {});
  }

  /** Speech was heard before a tone (a tone's own first blocks pass for voice until it is known as a tone). */
  private get spoke(): boolean {
    return this.longest >= SPOKE_MS;
  }

  private decide(cls: AmdClass, atMs: number, reason: string, extra: Partial<AmdEvidence>, more: Tone[] = []): AmdDecision {
    const rel = (ms: number) => Math.round(ms - this.startMs);
    this.decision = {
      cls,
      atMs,
      decideMs: rel(atMs),
      reason,
      evidence: {
        firstVoiceMs: this.firstVoice === null ? null : rel(this.firstVoice),
        longestSpeechMs: Math.round(this.longest),
        voicedMs: Math.round(this.voiced),
        tones: [...this.heard, ...more].map((t) => ({ freqHz: t.freqHz, startMs: rel(t.startMs), endMs: rel(t.endMs) })),
        ...extra,
      },
    };
    return this.decision;
  }

  /** The words heard when it was decided (for the run's evidence). */
  get transcript(): string {
    return this.text;
  }
}
