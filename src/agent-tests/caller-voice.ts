// How a scripted caller's line is heard as its words with no speech model (offline tests, CI): each line is spoken as
// a "voice" of its own, syllables of a voiced tone whose lengths and gaps come from the line's words, so its loudness
// over time is a fingerprint no other line shares; the agent's offline speech-to-text (ClipSpeechToText) is given
// every line of the scenario with its text and recognizes what it hears by that fingerprint, after the carrier's codec
// and resampling, exactly as it recognizes the committed espeak-ng clips. Nothing is shared between the two sides
// but the audio on the wire: a line the call mangles (cut by a clear, talked over) is not recognized.
import type { KnownClip } from "../agent/clip-speech";

export const VOICE_RATE = 16000;
const FRAME = VOICE_RATE / 50;

/** FNV-1a: a small stable hash, so a line always sounds the same. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A small deterministic generator seeded by the line (mulberry32). */
function generator(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The line as 16 kHz samples: per word, one to three syllables of 60–200 ms at a loudness of their own, 40–120 ms
 * apart (short of any end-of-turn silence), so the envelope is sparse and the lines' envelopes correlate little.
 */
export function callerVoice(text: string): Int16Array {
  const words = text.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const next = generator(hash(text.trim().toLowerCase()));
  const frames: number[] = [];
  for (const w of words) {
    const syllables = 1 + Math.min(2, Math.floor(w.length / 4));
    for (let s = 0; s < syllables; s++) {
      const loud = 0.35 + 0.65 * next();
      const on = 3 + Math.floor(next() * 8);
      for (let f = 0; f < on; f++) frames.push(loud);
      const off = 2 + Math.floor(next() * 5);
      for (let f = 0; f < off; f++) frames.push(0);
    }
  }
  const out = new Int16Array(frames.length * FRAME);
  const pitch = 140 + 80 * next();
  for (let f = 0; f < frames.length; f++) {
    for (let k = 0; k < FRAME; k++) {
      const i = f * FRAME + k;
      // A voiced sound: the pitch and two harmonics, loud enough for the session to count as speech.
      const t = i / VOICE_RATE;
      const v = Math.sin(2 * Math.PI * pitch * t) + 0.5 * Math.sin(4 * Math.PI * pitch * t) + 0.3 * Math.sin(6 * Math.PI * pitch * t);
      out[i] = Math.round(6000 * frames[f] * v);
    }
  }
  return out;
}

/** The clip the agent's offline speech-to-text knows the line by. */
export const callerClip = (text: string): KnownClip => ({ text, samples: callerVoice(text), rate: VOICE_RATE });
