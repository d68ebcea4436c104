// Voice activity on a two-channel call recording and the gaps between the caller's voice and the agent's
// (src/lib/audio/voice-activity.ts): on synthetic audio whose edges are known to the sample, and on the committed
// espeak-ng speech clips (test/fixtures/audio), laid out as the session's recorder lays out a call (the caller left,
// the agent right, stored as μ-law) with noise mixed in at several levels, fed in uneven chunks as R2 streams it.
import { describe, expect, it } from "vitest";
import { Recorder } from "../../src/calls/session/recorder";
import { Resampler } from "../../src/lib/audio/resample";
import { exchanges, MIN_VOICE_MS, NOISE_MARGIN_DB, RecordingVoices, VOICE_FLOOR_DBFS, type VoiceSegment } from "../../src/lib/audio/voice-activity";
import { readWav } from "../../src/lib/audio/wav";
import agentWav from "../fixtures/audio/agent-16k.wav?inline";
import seatsWav from "../fixtures/audio/callee-seats-8k.wav?inline";
import sureWav from "../fixtures/audio/callee-sure-8k.wav?inline";

const RATE = 8000;
// The clips come as data URLs (the test's runtime has no file system), at 8 kHz as a telephone call records them.
const clip = (dataUrl: string) => {
  const w = readWav(Uint8Array.from(atob(dataUrl.slice(dataUrl.indexOf(",") + 1)), (c) => c.charCodeAt(0)));
  return w.rate === RATE ? w.samples : new Resampler(w.rate as 16000, RATE).convert(w.samples);
};
const SEATS = clip(seatsWav);
const SURE = clip(sureWav);
const AGENT = clip(agentWav);

/**
 * Where a clip's voice begins and ends, read on the clean clip: its first and last 5 ms at least `barDb` loud (RMS,
 * dBFS). On a quiet line that is the voice's bar (-50 dBFS); on a noisy one, the line's noise plus the margin voice
 * must clear: a softer tail (the "s" of "seats" fades from -36 to -49 dBFS over 160 ms) is under the noise there.
 */
function voiceEdges(x: Int16Array, barDb = VOICE_FLOOR_DBFS): { firstMs: number; lastMs: number } {
  const block = (RATE * 5) / 1000;
  const loud = (b: number) => {
    let sum = 0;
    for (let i = b * block; i < (b + 1) * block; i++) sum += x[i] * x[i];
    return 10 * Math.log10(sum / block / 32768 ** 2 + 1e-12) >= barDb;
  };
  const blocks = Math.floor(x.length / block);
  let first = 0;
  let last = blocks - 1;
  while (first < blocks && !loud(first)) first++;
  while (last > 0 && !loud(last)) last--;
  return { firstMs: first * 5, lastMs: (last + 1) * 5 };
}

/** A deterministic noise source (xorshift), white, at `rms`. */
function noise(n: number, rms: number, seed = 7): Int16Array {
  let s = seed;
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = Math.round(((s >>> 0) / 2 ** 32 - 0.5) * 2 * Math.sqrt(3) * rms);
  }
  return out;
}

const tone = (ms: number, amp = 6000, hz = 440) =>
  Int16Array.from({ length: (ms * RATE) / 1000 }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * hz * i) / RATE)));

/** A call's two channels: each clip placed at its ms, with `noiseRms` on the caller's line (a telephone's hiss). */
function layout(totalMs: number, caller: Array<[number, Int16Array]>, agent: Array<[number, Int16Array]>, noiseRms = 0) {
  const n = (totalMs * RATE) / 1000;
  const left = noiseRms ? noise(n, noiseRms) : new Int16Array(n);
  const right = new Int16Array(n);
  const place = (ch: Int16Array, at: number, x: Int16Array) => {
    const o = Math.round((at * RATE) / 1000);
    for (let i = 0; i < x.length && o + i < n; i++) ch[o + i] = Math.max(-32768, Math.min(32767, ch[o + i] + x[i]));
  };
  for (const [at, x] of caller) place(left, at, x);
  for (const [at, x] of agent) place(right, at, x);
  return { left, right };
}

/** The two channels through the session's own recorder (μ-law, the agent's frames placed where they play). */
function record(left: Int16Array, right: Int16Array): Uint8Array {
  const rec = new Recorder(RATE, 64 * 1024 * 1024);
  const frame = RATE / 50;
  for (let i = 0, clock = 20; i + frame <= left.length; i += frame, clock += 20) {
    rec.agentFrame(clock - 20, right.slice(i, i + frame));
    rec.tick(clock, left.slice(i, i + frame));
  }
  return rec.finish()!;
}

/** The stored bytes analysed as R2 would stream them: chunks of uneven, odd sizes. */
function analyse(bytes: Uint8Array) {
  const v = new RecordingVoices(RATE, "mulaw");
  const sizes = [4093, 1, 777, 65_537];
  for (let at = 0, k = 0; at < bytes.length; k++) {
    const size = sizes[k % sizes.length];
    v.push(bytes.subarray(at, at + size));
    at += size;
  }
  return v.finish();
}

describe("voice activity on synthetic audio", () => {
  it("finds each burst's edges to within 5 ms; bridges pauses under the hangover; drops clicks", () => {
    const { left, right } = layout(
      6000,
      // Two words 150 ms apart (one stretch), a 10 ms click, then a word after a long pause.
      [
        [500, tone(400)],
        [1050, tone(300)],
        [2500, tone(10, 20000)],
        [3000, tone(500)],
      ],
      [[4100, tone(800, 8000, 600)]],
    );
    const { caller, agent, exchanges: ex } = analyse(record(left, right));
    const near = (got: VoiceSegment[], want: Array<[number, number]>) => {
      expect(got, JSON.stringify(got)).toHaveLength(want.length);
      got.forEach((s, i) => {
        expect(Math.abs(s.startMs - want[i][0]), `start ${s.startMs}`).toBeLessThanOrEqual(5);
        expect(Math.abs(s.endMs - want[i][1]), `end ${s.endMs}`).toBeLessThanOrEqual(5);
      });
    };
    near(caller, [
      [500, 1350],
      [3000, 3500],
    ]);
    near(agent, [[4100, 4900]]);
    expect(ex).toHaveLength(1);
    expect(Math.abs(ex[0].gapMs - 600)).toBeLessThanOrEqual(10);
  });

  it("an onset the caller said nothing before has no exchange; an overlap's gap is negative", () => {
    const a = (startMs: number, endMs: number) => ({ startMs, endMs });
    // The greeting (nobody spoke), the reply to the caller, a second sentence after a pause, then the agent starting
    // while the caller still speaks.
    const ex = exchanges([a(2000, 3000), a(6000, 7500)], [a(0, 1500), a(3700, 4500), a(5000, 5800), a(7200, 8000)]);
    expect(ex).toEqual([
      { callerEndMs: 3000, agentStartMs: 3700, gapMs: 700 },
      { callerEndMs: 7500, agentStartMs: 7200, gapMs: -300 },
    ]);
    // The caller spoke over the agent (a barge-in) and stopped after it did: the reply counts from their end.
    expect(exchanges([a(1000, 2600)], [a(0, 2000), a(3000, 3500)])).toEqual([{ callerEndMs: 2600, agentStartMs: 3000, gapMs: 400 }]);
    // A backchannel that ended while the agent went on is not a turn the next sentence answers.
    expect(exchanges([a(1000, 1300)], [a(0, 2000), a(2400, 3000)])).toEqual([]);
  });

  it("a line's steady noise is not voice; an unsupported rate is refused", () => {
    const { left, right } = layout(5000, [[2000, tone(600)]], [[3200, tone(500)]], 600);
    const { caller, exchanges: ex } = analyse(record(left, right));
    expect(caller).toHaveLength(1);
    expect(Math.abs(caller[0].endMs - 2600)).toBeLessThanOrEqual(10);
    expect(Math.abs(ex[0].gapMs - 600)).toBeLessThanOrEqual(15);
    expect(() => new RecordingVoices(11025)).toThrow(RangeError);
    expect(MIN_VOICE_MS).toBeGreaterThan(20);
  });

  it("a 16 kHz recording (Vonage's rate) is framed alike", () => {
    const n = 16000 * 3;
    const left = new Int16Array(n);
    const right = new Int16Array(n);
    const burst = (ch: Int16Array, fromMs: number, ms: number) => {
      for (let i = (fromMs * 16000) / 1000; i < ((fromMs + ms) * 16000) / 1000; i++) ch[i] = Math.round(6000 * Math.sin((2 * Math.PI * 440 * i) / 16000));
    };
    burst(left, 500, 500);
    burst(right, 1730, 600);
    const v = new RecordingVoices(16000, "mulaw");
    v.pushSamples(left, right);
    const { caller, exchanges: ex } = v.finish();
    expect(caller).toEqual([{ startMs: 500, endMs: 1000 }]);
    expect(ex).toEqual([{ callerEndMs: 1000, agentStartMs: 1730, gapMs: 730 }]);
  });

  it("reads 16-bit PCM recordings (those stored before μ-law) alike", () => {
    const { left, right } = layout(3000, [[500, tone(500)]], [[1600, tone(500)]]);
    const bytes = new Uint8Array(left.length * 4);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < left.length; i++) {
      view.setInt16(4 * i, left[i], true);
      view.setInt16(4 * i + 2, right[i], true);
    }
    const v = new RecordingVoices(RATE, "pcm16");
    for (let at = 0; at < bytes.length; at += 1001) v.push(bytes.subarray(at, at + 1001));
    const { exchanges: ex } = v.finish();
    expect(ex).toHaveLength(1);
    expect(Math.abs(ex[0].gapMs - 600)).toBeLessThanOrEqual(10);
  });
});

describe("voice activity on real speech (espeak-ng clips)", () => {
  const agent = voiceEdges(AGENT);

  // Noise on the caller's line (RMS of 32768): none, a quiet line (-61 dBFS), a noisy one (-50), a very noisy one (-41).
  it.each([0, 30, 100, 300])("a two-turn call's gaps agree with where the clips' voices end and begin (caller noise rms %i)", (noiseRms) => {
    // The speech's own peaks are about -15 dBFS: the voice the caller's channel can show is what clears the noise.
    const bar = noiseRms ? Math.max(VOICE_FLOOR_DBFS, 20 * Math.log10(noiseRms / 32768) + NOISE_MARGIN_DB) : VOICE_FLOOR_DBFS;
    const seats = voiceEdges(SEATS, bar);
    const sure = voiceEdges(SURE, bar);
    // The greeting at 0.3 s; the caller answers; the agent replies 640 ms after their voice; again, 910 ms.
    const greetingAt = 300;
    const sureAt = greetingAt + (AGENT.length / RATE) * 1000 + 400;
    const reply1At = sureAt + sure.lastMs + 640 - agent.firstMs;
    const seatsAt = reply1At + (AGENT.length / RATE) * 1000 + 500;
    const reply2At = seatsAt + seats.lastMs + 910 - agent.firstMs;
    const total = reply2At + (AGENT.length / RATE) * 1000 + 500;
    const { left, right } = layout(
      Math.ceil(total / 20) * 20,
      [
        [sureAt, SURE],
        [seatsAt, SEATS],
      ],
      [
        [greetingAt, AGENT],
        [reply1At, AGENT],
        [reply2At, AGENT],
      ],
      noiseRms,
    );
    const { exchanges: ex, caller } = analyse(record(left, right));
    // The greeting answers nobody: two exchanges, one per reply.
    expect(ex, JSON.stringify({ ex, caller })).toHaveLength(2);
    // Within 20 ms of the clean clips' edges (measured: 0-10 ms; 5 ms blocks, and the noise's own swings move the bar).
    expect(Math.abs(ex[0].gapMs - 640), `gap ${ex[0].gapMs}`).toBeLessThanOrEqual(20);
    expect(Math.abs(ex[1].gapMs - 910), `gap ${ex[1].gapMs}`).toBeLessThanOrEqual(20);
    expect(Math.abs(ex[0].agentStartMs - (reply1At + agent.firstMs))).toBeLessThanOrEqual(25);
    // The words' own pauses never split the caller's stretch.
    expect(caller).toHaveLength(2);
  });
});
