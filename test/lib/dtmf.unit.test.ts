// Keypad tones on their own: the generator (the Q.23 pairs, timing, pauses) and the Goertzel receiver that reads
// them back, through the codecs and rate changes a call puts them through, and not out of speech-like audio.
import { describe, expect, it } from "vitest";
import { DTMF_COLS, DTMF_ROWS, dtmfDigits, dtmfPair, dtmfTones } from "../../src/lib/audio/dtmf";
import { g711Decode, g711Encode } from "../../src/lib/audio/g711";
import { detectDtmf, dtmfString, goertzel } from "../../src/lib/audio/goertzel";
import { Resampler, type SampleRate } from "../../src/lib/audio/resample";

const ALL = "0123456789*#ABCD";

/** A deterministic noise source (xorshift), so a failing case repeats. */
function noise(n: number, amp: number, seed = 7): Int16Array {
  let s = seed;
  return Int16Array.from({ length: n }, () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return Math.round(((s >>> 0) / 2 ** 32 - 0.5) * 2 * amp);
  });
}

describe("DTMF tones", () => {
  it("each key is its Q.23 row and column pair", () => {
    expect(dtmfPair("1")).toEqual([697, 1209]);
    expect(dtmfPair("5")).toEqual([770, 1336]);
    expect(dtmfPair("9")).toEqual([852, 1477]);
    expect(dtmfPair("0")).toEqual([941, 1336]);
    expect(dtmfPair("*")).toEqual([941, 1209]);
    expect(dtmfPair("#")).toEqual([941, 1477]);
    expect(dtmfPair("D")).toEqual([941, 1633]);
    expect(dtmfPair("x")).toBeNull();
    expect(dtmfPair("12")).toBeNull();
  });

  it("100 ms of tone and 100 ms of gap a key, w half a second and W a second, at the call's rate", () => {
    expect(dtmfTones("1", 8000).length).toBe(1600);
    expect(dtmfTones("12", 16000).length).toBe(6400);
    expect(dtmfTones("1w2", 8000).length).toBe(1600 + 4000 + 1600);
    expect(dtmfTones("W", 24000).length).toBe(24000);
    const t = dtmfTones("5", 8000);
    // The gap is silence; the tone's energy is in its two frequencies and no other key's.
    expect(t.subarray(800).every((v) => v === 0)).toBe(true);
    const tone = t.subarray(0, 800);
    const p = (f: number) => goertzel(tone, 0, tone.length, f, 8000);
    expect(p(770)).toBeGreaterThan(1e7);
    expect(p(1336)).toBeGreaterThan(1e7);
    for (const f of [...DTMF_ROWS, ...DTMF_COLS].filter((f) => f !== 770 && f !== 1336)) expect(p(f)).toBeLessThan(p(770) / 100);
    // Loud, never clipped.
    expect(Math.max(...tone.map(Math.abs))).toBeLessThan(32767);
  });

  it("reads what a key string may hold: keys, a-d in either case, w and W; nothing else", () => {
    expect(dtmfDigits("123#")).toBe("123#");
    expect(dtmfDigits("1w2W*a")).toBe("1w2W*A");
    for (const bad of ["", "12 3", "1-2", "E", "+1", "x".repeat(3), "1".repeat(65)]) expect(dtmfDigits(bad), bad).toBeNull();
    expect(() => dtmfTones("1x", 8000)).toThrow(/not a DTMF key/);
  });
});

describe("the Goertzel receiver", () => {
  it("reads every key back at 8, 16 and 24 kHz, with when each began", () => {
    for (const rate of [8000, 16000, 24000]) expect(dtmfString(dtmfTones(ALL, rate), rate), String(rate)).toBe(ALL);
    const keys = detectDtmf(dtmfTones("12", 8000), 8000);
    expect(keys.map((k) => k.digit)).toEqual(["1", "2"]);
    expect(keys[0].atMs).toBeLessThanOrEqual(10);
    expect(Math.abs(keys[1].atMs - 200)).toBeLessThanOrEqual(30);
  });

  it("through G.711 (both laws), through a rate change, and under noise 20 dB down", () => {
    const t8 = dtmfTones(ALL, 8000);
    for (const law of ["mulaw", "alaw"] as const) expect(dtmfString(g711Decode(law, g711Encode(law, t8)), 8000), law).toBe(ALL);
    for (const [from, to] of [
      [16000, 8000],
      [8000, 16000],
      [24000, 8000],
    ] as const) {
      const r = new Resampler(from as SampleRate, to as SampleRate).convert(dtmfTones(ALL, from));
      expect(dtmfString(r, to), `${from}->${to}`).toBe(ALL);
    }
    const hiss = noise(t8.length, 1500);
    const noisy = Int16Array.from(t8, (v, i) => v + hiss[i]);
    expect(dtmfString(noisy, 8000)).toBe(ALL);
  });

  it("a key repeated is read twice (the gap parts them), a pause changes nothing", () => {
    expect(dtmfString(dtmfTones("1122w#", 8000), 8000)).toBe("1122#");
  });

  it("no key in silence, noise, one steady sine, or a vowel-like mix of harmonics", () => {
    const n = 8000;
    expect(dtmfString(new Int16Array(n), 8000)).toBe("");
    expect(dtmfString(noise(n, 8000), 8000)).toBe("");
    const sine = (hz: number, amp: number) => Int16Array.from({ length: n }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * hz * i) / 8000)));
    expect(dtmfString(sine(1000, 10000), 8000)).toBe("");
    expect(dtmfString(sine(697, 10000), 8000)).toBe("");
    const vowel = Int16Array.from({ length: n }, (_, i) => {
      let v = 0;
      for (let h = 1; h <= 12; h++) v += (6000 / h) * Math.sin((2 * Math.PI * 120 * h * i) / 8000);
      return Math.round(v);
    });
    expect(dtmfString(vowel, 8000)).toBe("");
  });
});
