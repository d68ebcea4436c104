// The labelled set of answers (issue 42): each answer's plan is drawn from a seeded generator, its speech synthesized
// offline by eSpeak NG (the npm WebAssembly build: the same in Node everywhere), resampled to 8 kHz, mixed with the
// planned tones and noise, and kept as the phone codec carries it (8 kHz G.711 µ-law). The same seed gives the same
// plans and, for the same espeak-ng version, the same bytes: bench/amd/labels.json keeps each file's SHA-256.
import { g711Decode, g711Encode } from "../../src/lib/audio/g711";
import { prng } from "../../test/campaigns/prng";

export type Label = {
  id: string;
  cls: "human" | "machine_greeting" | "beep" | "ivr_menu" | "call_screening" | "fax_tone" | "silence";
  text: string;
  voice: string;
  /** The beep's onset and end (ms from the answer) and frequency, for answers that beep. */
  beep: { onsetMs: number; endMs: number; hz: number } | null;
  /** Background noise's level (dBFS RMS), or null for a clean line. */
  noiseDbfs: number | null;
  ms: number;
  sha256?: string;
};

export const RATE = 8000;

/** The simulations' seeded generator (mulberry32), so every run draws the same set. */
export const seeded = prng;

const NAMES = ["Sam", "Maria", "David", "Priya", "the Johnson family", "Dr. Patel's office", "Alex", "Karen"];
const HUMAN = [
  "Hello?",
  "Hi.",
  "Hello.",
  "Yeah?",
  "Hello, this is Sarah.",
  "Hi, this is Mike speaking.",
  "Speaking.",
  "Hello, who's calling?",
  "Good morning, Acme Dental.",
  "Hey, what's up?",
  "Yes, hello?",
  "Hello, Jennifer speaking.",
  "This is Tom.",
  "Hi there.",
  "Good afternoon, how can I help you?",
];
const GREETING_OPEN = ["Hi, you've reached {n}.", "Hello, this is {n}.", "You have reached the voicemail of {n}.", "Hey, it's {n}."];
const GREETING_MIDDLE = [
  "I can't take your call right now.",
  "I'm not available at the moment.",
  "Sorry I missed you.",
  "I'm away from the phone.",
  "Nobody is available to take your call.",
];
const GREETING_CLOSE = [
  "Please leave a message after the tone.",
  "Leave your name and number and I'll call you back.",
  "Please leave a message.",
  "I'll get back to you as soon as I can.",
  "Thanks, and have a great day.",
];
const GENERIC = [
  "The person you are calling is not available. Please record your message at the tone.",
  "The number you have dialed is not available. At the tone, please record your message.",
  "The wireless customer you are calling is not available.",
];
const IVR = [
  "Thank you for calling Acme Insurance. For sales, press one. For support, press two.",
  "Welcome to City Bank. Please listen carefully as our options have changed. For account balances, press one.",
  "Thank you for calling. If you know your party's extension, dial it now. For the operator, press zero.",
  "Hello, and welcome. For English, press one. Para español, oprima dos.",
  "You have reached the main menu. For billing, press one. To repeat this menu, press star.",
];
const SCREENING = [
  "Hi, the person you're calling is using a screening service from Google. Go ahead and say your name and why you're calling.",
  "Hi, if you record your name and reason for calling, I'll see if this person is available.",
  "Hello, this is the Google Assistant answering for Sam. Please state your name and the reason for your call.",
  "This call is being screened. Please say your name and why you are calling.",
];
const VOICES = ["en-us", "en-gb", "en-us+f3", "en-us+m3", "en-gb+f4"];
const BEEP_HZ = [440, 700, 850, 950, 1000, 1400, 1800];
const NOISE = [null, null, -55, -45, -40];

export type Plan = Label & {
  /** The answer's parts on its timeline: speech (synthesized), a pause, a tone, in order. */
  parts: Array<{ say: string; wpm: number } | { pause: number } | { tone: number; ms: number; dbfs: number }>;
};

/** The set: `count` answers per class as planned, the same for a seed. */
export function plan(seed = 42): Plan[] {
  const r = seeded(seed);
  const plans: Plan[] = [];
  const add = (cls: Label["cls"], n: number, make: (i: number) => Pick<Plan, "parts" | "text">) => {
    for (let i = 0; i < n; i++) {
      const { parts, text } = make(i);
      plans.push({ id: `${cls}-${String(i).padStart(3, "0")}`, cls, text, voice: r.pick(VOICES), beep: null, noiseDbfs: r.pick(NOISE), ms: 0, parts });
    }
  };
  const wpm = () => r.int(150, 190);
  add("human", 64, (i) => {
    const say = HUMAN[i % HUMAN.length];
    const parts: Plan["parts"] = [{ pause: r.int(150, 900) }, { say, wpm: wpm() }, { pause: r.int(2200, 3500) }];
    // A third say "Hello?" again when nobody answers them.
    if (r.next() < 0.33) parts.push({ say: "Hello?", wpm: wpm() }, { pause: 1500 });
    return { parts, text: parts.flatMap((p) => ("say" in p ? [p.say] : [])).join(" ") };
  });
  const greeting = (len: number) => {
    const n = r.pick(NAMES);
    if (len === 0) return [r.pick(GENERIC)];
    const s = [r.pick(GREETING_OPEN).replace("{n}", n), r.pick(GREETING_MIDDLE)];
    if (len >= 2) s.push(r.pick(GREETING_CLOSE));
    if (len >= 3) s.push("You can also reach me by email, or try my office line during business hours.");
    return s;
  };
  const spoken = (sentences: string[]) => {
    const parts: Plan["parts"] = [{ pause: r.int(150, 700) }];
    sentences.forEach((say, i) => {
      if (i > 0) parts.push({ pause: r.int(150, 600) });
      parts.push({ say, wpm: wpm() });
    });
    return parts;
  };
  const beepy = (i: number, parts: Plan["parts"]) => {
    parts.push(
      { pause: r.int(200, 900) },
      { tone: BEEP_HZ[i % BEEP_HZ.length], ms: r.pick([150, 250, 400, 600, 1000]), dbfs: r.int(-20, -10) },
      { pause: 2500 },
    );
    return parts;
  };
  add("machine_greeting", 80, (i) => {
    const sentences = greeting(i % 4);
    const parts = spoken(sentences);
    // Most greetings end on a beep; some mailboxes never beep.
    if (i % 5 !== 4) beepy(i, parts);
    else parts.push({ pause: 3000 });
    return { parts, text: sentences.join(" ") };
  });
  add("beep", 10, (i) => ({ parts: beepy(i + 3, [{ pause: r.int(300, 1200) }]), text: "" }));
  add("ivr_menu", 26, (i) => {
    const say = IVR[i % IVR.length];
    return { parts: [{ pause: r.int(150, 700) }, { say, wpm: wpm() }, { pause: 2000 }], text: say };
  });
  add("call_screening", 22, (i) => {
    const say = SCREENING[i % SCREENING.length];
    return { parts: [{ pause: r.int(150, 700) }, { say, wpm: wpm() }, { pause: 2500 }], text: say };
  });
  add("fax_tone", 16, (i) => {
    // A fax machine calling sends CNG (1100 Hz, 0.5 s on, 3 s off); one answering sends 2100 Hz for ~3 s.
    const parts: Plan["parts"] =
      i % 4 === 3
        ? [{ pause: r.int(100, 500) }, { tone: 2100, ms: 3000, dbfs: -15 }, { pause: 1000 }]
        : [{ pause: r.int(100, 800) }, { tone: 1100, ms: 500, dbfs: r.int(-22, -12) }, { pause: 3000 }, { tone: 1100, ms: 500, dbfs: -15 }, { pause: 1000 }];
    return { parts, text: "" };
  });
  add("silence", 16, () => ({ parts: [{ pause: 7000 }], text: "" }));
  return plans;
}

/** 22,050 Hz (espeak-ng's rate) to 8 kHz: a windowed-sinc low-pass at 3.6 kHz, evaluated at each output instant. */
export function to8k(x: Int16Array, from: number): Int16Array {
  const ratio = from / RATE;
  const out = new Int16Array(Math.floor(x.length / ratio));
  const cutoff = 3600 / from;
  const taps = 24;
  for (let i = 0; i < out.length; i++) {
    const t = i * ratio;
    const c = Math.floor(t);
    let acc = 0;
    for (let k = c - taps; k <= c + taps; k++) {
      if (k < 0 || k >= x.length) continue;
      const d = t - k;
      const w = 0.5 + 0.5 * Math.cos((Math.PI * d) / (taps + 1));
      const s = d === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * d) / (Math.PI * d);
      acc += x[k] * s * w;
    }
    out[i] = Math.max(-32768, Math.min(32767, Math.round(acc)));
  }
  return out;
}

export type Synth = (text: string, voice: string, wpm: number) => Promise<Int16Array>;

/** One answer as 8 kHz µ-law, with its label's timings filled in. */
export type Span = { startMs: number; endMs: number; text: string };

export async function render(p: Plan, synth: Synth, seed: number): Promise<{ label: Label; ulaw: Uint8Array; spans: Span[] }> {
  const r = seeded(seed);
  const chunks: Int16Array[] = [];
  const spans: Span[] = [];
  const ms = (n: number) => Math.round((n * 1000) / RATE);
  let at = 0;
  let beep: Label["beep"] = null;
  for (const part of p.parts) {
    let c: Int16Array;
    if ("say" in part) {
      c = await synth(part.say, p.voice, part.wpm);
      spans.push({ startMs: ms(at), endMs: ms(at + c.length), text: part.say });
    } else if ("pause" in part) c = new Int16Array(Math.round((part.pause * RATE) / 1000));
    else {
      c = new Int16Array(Math.round((part.ms * RATE) / 1000));
      const amp = 32768 * Math.SQRT2 * 10 ** (part.dbfs / 20);
      const ramp = RATE * 0.005; // 5 ms edges, as a real oscillator's
      for (let i = 0; i < c.length; i++) c[i] = Math.round(amp * Math.min(1, i / ramp, (c.length - i) / ramp) * Math.sin((2 * Math.PI * part.tone * i) / RATE));
      if (p.cls !== "fax_tone" && !beep) beep = { onsetMs: Math.round((at * 1000) / RATE), endMs: Math.round(((at + c.length) * 1000) / RATE), hz: part.tone };
    }
    chunks.push(c);
    at += c.length;
  }
  const pcm = new Int16Array(at);
  let o = 0;
  for (const c of chunks) {
    pcm.set(c, o);
    o += c.length;
  }
  if (p.noiseDbfs !== null) {
    // Line and room noise: white noise through a gentle low-pass (rather pink than hiss), at the planned RMS.
    const sd = 32768 * 10 ** (p.noiseDbfs / 20);
    let lp = 0;
    for (let i = 0; i < pcm.length; i++) {
      const white = (r.next() + r.next() + r.next() - 1.5) * 2; // ~unit variance
      lp = 0.6 * lp + 0.4 * white;
      pcm[i] = Math.max(-32768, Math.min(32767, pcm[i] + Math.round(lp * sd * 1.6)));
    }
  }
  const ulaw = g711Encode("mulaw", pcm);
  const label: Label = { id: p.id, cls: p.cls, text: p.text, voice: p.voice, beep, noiseDbfs: p.noiseDbfs, ms: Math.round((at * 1000) / RATE) };
  return { label, ulaw, spans };
}

export const decode = (ulaw: Uint8Array) => g711Decode("mulaw", ulaw);

/** A µ-law WAV (format 7, 8 kHz mono): what phones carry, readable by sox, players and the tests. */
export function ulawWav(codes: Uint8Array): Uint8Array {
  const out = new Uint8Array(58 + codes.length + (codes.length & 1));
  const v = new DataView(out.buffer);
  const tag = (at: number, s: string) => {
    for (let i = 0; i < s.length; i++) out[at + i] = s.charCodeAt(i);
  };
  tag(0, "RIFF");
  v.setUint32(4, out.length - 8, true);
  tag(8, "WAVE");
  tag(12, "fmt ");
  v.setUint32(16, 18, true);
  v.setUint16(20, 7, true); // µ-law
  v.setUint16(22, 1, true);
  v.setUint32(24, RATE, true);
  v.setUint32(28, RATE, true);
  v.setUint16(32, 1, true);
  v.setUint16(34, 8, true);
  v.setUint16(36, 0, true);
  tag(38, "fact");
  v.setUint32(42, 4, true);
  v.setUint32(46, codes.length, true);
  tag(50, "data");
  v.setUint32(54, codes.length, true);
  out.set(codes, 58);
  return out;
}
