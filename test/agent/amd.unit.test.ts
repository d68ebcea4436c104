// Answering-machine detection on committed answers from the labelled set (test/fixtures/amd/: 8 kHz µ-law, as the
// phone carries them): the tone detector finds beeps and fax tones and no beep in speech; the classifier names each
// answer; the wait for the mailbox starts the message just after the beep's end.
import { describe, expect, it } from "vitest";
import { AmdClassifier, type AmdDecision } from "../../src/agent/amd/classifier";
import { MachineWait } from "../../src/agent/machine-wait";
import { DEFAULT_TURN_SETTINGS } from "../../src/agent/turn-settings";
import { keywordClass } from "../../src/agent/voicemail";
import { g711Decode } from "../../src/lib/audio/g711";
import { isVoiced } from "../../src/lib/audio/level";
import { isBeep, type Tone, ToneTracker } from "../../src/lib/audio/tones";
import fixtureLabels from "../fixtures/amd/labels.json";
import human_000 from "../fixtures/amd/human-000.wav?inline";
import human_004 from "../fixtures/amd/human-004.wav?inline";
import greeting_000 from "../fixtures/amd/machine_greeting-000.wav?inline";
import greeting_002 from "../fixtures/amd/machine_greeting-002.wav?inline";
import greeting_004 from "../fixtures/amd/machine_greeting-004.wav?inline";
import beep_000 from "../fixtures/amd/beep-000.wav?inline";
import ivr_menu_000 from "../fixtures/amd/ivr_menu-000.wav?inline";
import screening_001 from "../fixtures/amd/call_screening-001.wav?inline";
import fax_tone_000 from "../fixtures/amd/fax_tone-000.wav?inline";
import fax_tone_003 from "../fixtures/amd/fax_tone-003.wav?inline";

type Label = {
  id: string;
  cls: string;
  beep: { onsetMs: number; endMs: number; hz: number } | null;
  spans: Array<{ startMs: number; endMs: number; text: string }>;
};
const labels = fixtureLabels.answers as Label[];
// The clips come as data URLs (the test's runtime has no file system).
const WAVS: Record<string, string> = {
  "human-000": human_000,
  "human-004": human_004,
  "machine_greeting-000": greeting_000,
  "machine_greeting-002": greeting_002,
  "machine_greeting-004": greeting_004,
  "beep-000": beep_000,
  "ivr_menu-000": ivr_menu_000,
  "call_screening-001": screening_001,
  "fax_tone-000": fax_tone_000,
  "fax_tone-003": fax_tone_003,
};
const label = (id: string) => labels.find((l) => l.id === id)!;

/** The clip's samples (its µ-law data decoded), followed by 6 s of a quiet line. */
function clip(id: string): Int16Array {
  const url = WAVS[id];
  const bytes = Uint8Array.from(atob(url.slice(url.indexOf(",") + 1)), (c) => c.charCodeAt(0));
  expect(bytes[20]).toBe(7); // µ-law
  const pcm = g711Decode("mulaw", bytes.subarray(58));
  const out = new Int16Array(pcm.length + 6 * 8000);
  out.set(pcm);
  return out;
}

const frames = function* (pcm: Int16Array) {
  for (let from = 0; from + 160 <= pcm.length; from += 160) {
    const samples = pcm.subarray(from, from + 160);
    yield { samples, atMs: from / 8, voiced: isVoiced(samples) };
  }
};

function tonesOf(pcm: Int16Array): Tone[] {
  const t = new ToneTracker(8000);
  return [...frames(pcm)].flatMap((f) => t.push(f.samples, f.atMs));
}

/** The classifier over the clip; `words`: each word given as a streaming engine would, ~300 ms after it was said. */
function classify(id: string, words: boolean): AmdDecision {
  const amd = new AmdClassifier(0, 8000);
  const timed = label(id).spans.flatMap((s) =>
    s.text.split(" ").map((w, i, all) => ({ w, atMs: s.startMs + ((i + 1) / all.length) * (s.endMs - s.startMs) + 300 })),
  );
  for (const f of frames(clip(id))) {
    const said = timed.filter((t) => t.atMs <= f.atMs);
    const d = (words && said.length ? amd.words(said.map((t) => t.w).join(" "), f.atMs) : null) ?? amd.frame(f);
    if (d) return d;
  }
  throw new Error(`${id}: undecided`);
}

describe("tone detector", () => {
  it("finds a pure beep's frequency, onset and end to within a block", () => {
    const pcm = new Int16Array(8000);
    for (let i = 2000; i < 4400; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / 8000)); // 250-550 ms
    const [t, ...rest] = tonesOf(pcm);
    expect(rest).toEqual([]);
    expect(Math.abs(t.freqHz - 1000)).toBeLessThanOrEqual(10);
    expect(Math.abs(t.startMs - 250)).toBeLessThanOrEqual(30);
    expect(Math.abs(t.endMs - 550)).toBeLessThanOrEqual(30);
    expect(isBeep(t)).toBe(true);
  });

  it("finds the beep after a greeting, at the labelled frequency and time", () => {
    for (const id of ["machine_greeting-000", "machine_greeting-002", "beep-000"]) {
      const b = label(id).beep!;
      const beeps = tonesOf(clip(id)).filter(isBeep);
      expect(beeps, id).toHaveLength(1);
      expect(Math.abs(beeps[0].freqHz - b.hz), id).toBeLessThanOrEqual(15);
      expect(Math.abs(beeps[0].endMs - b.endMs), id).toBeLessThanOrEqual(40);
    }
  });

  it("hears no beep in speech, and a fax's calling tone at 1100 Hz", () => {
    for (const id of ["human-004", "ivr_menu-000", "call_screening-001", "machine_greeting-004"]) expect(tonesOf(clip(id)).filter(isBeep), id).toEqual([]);
    const cng = tonesOf(clip("fax_tone-000"));
    expect(cng.map((t) => Math.round(t.freqHz / 50) * 50)).toEqual([1100, 1100]);
  });
});

describe("classifier", () => {
  it.each([
    ["human-000", "human"],
    ["human-004", "human"],
    ["machine_greeting-000", "machine_greeting"],
    ["machine_greeting-002", "machine_greeting"],
    ["machine_greeting-004", "machine_greeting"],
    ["beep-000", "beep"],
    ["fax_tone-000", "fax_tone"],
    ["fax_tone-003", "fax_tone"],
  ])("%s on its audio alone: %s", (id, cls) => {
    expect(classify(id, false).cls).toBe(cls);
  });

  it("a person's short opening is decided on the pause after it, within about a second", () => {
    const d = classify("human-000", false);
    const opening = label("human-000").spans[0];
    expect(d.decideMs - opening.endMs).toBeGreaterThanOrEqual(DEFAULT_TURN_SETTINGS.endOfTurnMs);
    expect(d.decideMs - opening.endMs).toBeLessThan(1300);
    expect(d.evidence.pauseMs).toBeGreaterThanOrEqual(800);
  });

  it("words name an IVR menu and a screening service (the audio alone says machine)", () => {
    expect(classify("ivr_menu-000", true)).toMatchObject({ cls: "ivr_menu", evidence: { keyword: "for sales" } });
    expect(classify("call_screening-001", true)).toMatchObject({ cls: "call_screening", evidence: { keyword: "record your name" } });
    expect(classify("ivr_menu-000", false).cls).toBe("machine_greeting");
  });

  it("a bare beep is its evidence: frequency and timing", () => {
    const d = classify("beep-000", false);
    const b = label("beep-000").beep!;
    expect(d.evidence.tones).toHaveLength(1);
    expect(Math.abs(d.evidence.tones[0].freqHz - b.hz)).toBeLessThanOrEqual(15);
    expect(d.decideMs - b.endMs).toBeLessThan(100);
  });

  it("keywords: 'who's calling' alone is a person's; a long prompt asking it is a screening service's", () => {
    expect(keywordClass("Hello, who's calling?", 900)).toBeNull();
    expect(keywordClass("Hi, the person you're calling wants to know who's calling", 4000)?.cls).toBe("call_screening");
    expect(keywordClass("To pay your bill, press one")).toEqual({ cls: "ivr_menu", keyword: "press one" });
    expect(keywordClass("Please leave a message after the tone")?.cls).toBe("machine_greeting");
  });
});

describe("waiting for the mailbox", () => {
  /** The message's start: classified on the audio, then MachineWait from the decision. */
  function messageAt(id: string): number | null {
    const amd = new AmdClassifier(0, 8000);
    let wait: MachineWait | null = null;
    for (const f of frames(clip(id))) {
      if (!wait) {
        const d = amd.frame(f);
        if (d) {
          wait = new MachineWait(d.atMs, DEFAULT_TURN_SETTINGS, 8000);
          const t = d.evidence.tones.at(-1);
          if (t && d.reason.includes("beep")) wait.beeped({ ...t, share: 1 });
        }
        continue;
      }
      if (wait.push(f.atMs, f.voiced, f.samples) === "leave") return f.atMs + 20;
    }
    return null;
  }

  it("starts the message within 500 ms after the beep's end, never before", () => {
    for (const id of ["machine_greeting-000", "machine_greeting-002", "beep-000"]) {
      const gap = messageAt(id)! - label(id).beep!.endMs;
      expect(gap, id).toBeGreaterThanOrEqual(0);
      expect(gap, id).toBeLessThanOrEqual(500);
    }
  });

  it("without a beep, after the greeting and the quiet that follows it", () => {
    const spans = label("machine_greeting-004").spans;
    const after = messageAt("machine_greeting-004")! - spans.at(-1)!.endMs;
    expect(after).toBeGreaterThanOrEqual(DEFAULT_TURN_SETTINGS.afterToneMs);
    expect(after).toBeLessThan(DEFAULT_TURN_SETTINGS.afterToneMs + 500);
  });
});
