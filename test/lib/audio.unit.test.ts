// The audio layer on its own: G.711 both laws, PCM byte order, resampling, 20 ms framing and the outbound pacer.
import { describe, expect, it } from "vitest";
import { Framer, frameBytes } from "../../src/lib/audio/framer";
import { G711_SILENCE, g711Decode, g711Encode } from "../../src/lib/audio/g711";
import { Pacer } from "../../src/lib/audio/pacer";
import { base64ToBytes, bytesToBase64, pcm16FromBytes, pcm16ToBytes } from "../../src/lib/audio/pcm";
import { Resampler, type SampleRate } from "../../src/lib/audio/resample";
import { Recorder } from "../../src/calls/session/recorder";

const allCodes = Uint8Array.from({ length: 256 }, (_, i) => i);
const sine = (rate: number, hz: number, n: number, amp = 8000) =>
  Int16Array.from({ length: n }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * hz * i) / rate)));
const rms = (x: Int16Array) => Math.sqrt(x.reduce((s, v) => s + v * v, 0) / Math.max(1, x.length));

describe("G.711", () => {
  it("μ-law: the standard's fixed points (silence, both extremes) and every code survives decode then encode", () => {
    const decoded = g711Decode("mulaw", allCodes);
    expect([decoded[0xff], decoded[0x7f], decoded[0x00], decoded[0x80]]).toEqual([0, 0, -32124, 32124]);
    const again = g711Encode("mulaw", decoded);
    // 0x7f is "negative zero": it decodes to 0, which encodes as 0xff.
    for (let c = 0; c < 256; c++) expect(again[c]).toBe(c === 0x7f ? 0xff : c);
    expect(g711Encode("mulaw", Int16Array.of(0))[0]).toBe(G711_SILENCE.mulaw);
  });

  it("A-law: the standard's fixed points and every code survives decode then encode", () => {
    const decoded = g711Decode("alaw", allCodes);
    expect([decoded[0xd5], decoded[0x55], decoded[0xaa], decoded[0x2a]]).toEqual([8, -8, 32256, -32256]);
    const again = g711Encode("alaw", decoded);
    for (let c = 0; c < 256; c++) expect(again[c]).toBe(c);
    expect(g711Encode("alaw", Int16Array.of(0))[0]).toBe(G711_SILENCE.alaw);
  });

  it.each(["mulaw", "alaw"] as const)("%s: every 16-bit sample comes back within the law's step size, sign kept", (law) => {
    const all = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
    const back = g711Decode(law, g711Encode(law, all));
    for (let i = 0; i < all.length; i++) {
      const s = all[i];
      // Logarithmic steps: about 1/16 of the magnitude (the coarsest segment is 1024 wide), finer near zero.
      expect(Math.abs(back[i] - s)).toBeLessThanOrEqual(Math.max(16, Math.abs(s) / 15));
      if (Math.abs(s) > 64) expect(Math.sign(back[i])).toBe(Math.sign(s));
    }
  });

  it("writes into a caller's buffer without allocating a new one", () => {
    const out = new Uint8Array(160);
    const samples = sine(8000, 440, 160);
    expect(g711Encode("mulaw", samples, out).buffer).toBe(out.buffer);
    const pcm = new Int16Array(160);
    expect(g711Decode("mulaw", out, pcm).buffer).toBe(pcm.buffer);
  });
});

describe("PCM and base64", () => {
  it("16-bit little-endian both ways, negative samples included", () => {
    const samples = Int16Array.of(0, 1, -1, 32767, -32768, 0x1234);
    const bytes = pcm16ToBytes(samples);
    expect([...bytes]).toEqual([0, 0, 1, 0, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x80, 0x34, 0x12]);
    expect([...pcm16FromBytes(bytes)]).toEqual([...samples]);
  });

  it("base64 round-trips bytes of every value and a long buffer", () => {
    expect(base64ToBytes(bytesToBase64(allCodes))).toEqual(allCodes);
    const long = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 31) & 0xff);
    expect(base64ToBytes(bytesToBase64(long))).toEqual(long);
  });
});

describe("Resampler", () => {
  const pairs: Array<[SampleRate, SampleRate]> = [
    [8000, 16000],
    [16000, 8000],
    [8000, 24000],
    [24000, 8000],
    [16000, 24000],
    [24000, 16000],
  ];

  it.each(pairs)("%i -> %i: the output length follows the ratio, and 20 ms pieces give what the whole gives", (from, to) => {
    const input = sine(from, 300, from); // one second
    const whole = new Resampler(from, to).convert(input);
    // The last input sample's later output positions wait for the next piece: at most one input sample's worth.
    expect(to - whole.length).toBeGreaterThanOrEqual(0);
    expect(to - whole.length).toBeLessThanOrEqual(Math.ceil(to / from));
    const r = new Resampler(from, to);
    const piece = from / 50;
    const parts: number[] = [];
    for (let i = 0; i < input.length; i += piece) parts.push(...r.convert(input.subarray(i, i + piece)));
    expect(parts).toEqual([...whole]);
  });

  it.each(pairs)("%i -> %i: a 300 Hz tone keeps its loudness and its pitch", (from, to) => {
    const out = new Resampler(from, to).convert(sine(from, 300, from));
    const body = out.subarray(to / 10); // past the filter's start-up
    expect(rms(body) / rms(sine(to, 300, to))).toBeGreaterThan(0.9);
    expect(rms(body) / rms(sine(to, 300, to))).toBeLessThan(1.05);
    // Zero crossings: 600 a second for 300 Hz, so 540 in the last nine tenths.
    let crossings = 0;
    for (let i = 1; i < body.length; i++) if (body[i - 1] < 0 !== body[i] < 0) crossings++;
    expect(Math.abs(crossings - 540)).toBeLessThanOrEqual(2);
  });

  it.each([
    [24000, 8000],
    [16000, 8000],
    [24000, 16000],
  ] as Array<[SampleRate, SampleRate]>)("%i -> %i: what the lower rate cannot hold is filtered out, not folded back into the speech band", (from, to) => {
    const level = (hz: number) => rms(new Resampler(from, to).convert(sine(from, hz, from)).subarray(to / 10)) / rms(sine(to, 300, to));
    expect(level(to * 0.75)).toBeLessThan(0.05); // above the new Nyquist: would alias
    expect(level(to * 0.3)).toBeGreaterThan(0.85); // speech band, kept
  });
});

describe("Framer", () => {
  it("cuts any piece sizes into 20 ms frames in order and pads the rest with silence on flush", () => {
    const size = frameBytes(8000, 1);
    expect(size).toBe(160);
    expect(frameBytes(16000, 2)).toBe(640);
    const f = new Framer(size);
    const frames: Uint8Array[] = [];
    const data = Uint8Array.from({ length: 1000 }, (_, i) => i & 0xff);
    for (const cut of [
      [0, 7],
      [7, 400],
      [400, 401],
      [401, 1000],
    ])
      f.push(data.subarray(cut[0], cut[1]), (fr) => frames.push(fr));
    expect(frames.map((x) => x.length)).toEqual([160, 160, 160, 160, 160, 160]);
    expect(Uint8Array.from(frames.flatMap((x) => [...x]))).toEqual(data.subarray(0, 960));
    const last = f.flush(0xff)!;
    expect([...last.subarray(0, 40)]).toEqual([...data.subarray(960)]);
    expect(last.subarray(40).every((b) => b === 0xff)).toBe(true);
    expect(f.flush(0xff)).toBeNull();
  });

  it("reset drops a partial frame", () => {
    const f = new Framer(4);
    const frames: Uint8Array[] = [];
    f.push(Uint8Array.of(1, 2, 3), (x) => frames.push(x));
    f.reset();
    f.push(Uint8Array.of(4, 5, 6, 7), (x) => frames.push(x));
    expect(frames.map((x) => [...x])).toEqual([[4, 5, 6, 7]]);
  });
});

describe("Pacer", () => {
  const frame = (n: number) => Uint8Array.of(n);
  const names = (items: ReturnType<Pacer["due"]>) => items.map((i) => (i.kind === "frame" ? i.frame[0] : i.name));

  it("sends a lead of frames at once, then one per 20 ms as the play clock advances", () => {
    const p = new Pacer(3);
    for (let i = 0; i < 10; i++) p.enqueue(frame(i));
    // Frames play at 1000, 1020, 1040, ...; each is sent once it plays less than three frames (60 ms) from now.
    expect(names(p.due(1000))).toEqual([0, 1, 2]);
    expect(names(p.due(1010))).toEqual([3]);
    expect(names(p.due(1020))).toEqual([]);
    expect(names(p.due(1030))).toEqual([4]);
    expect(names(p.due(1075))).toEqual([5, 6]);
    // Played out by 2000: the clock restarts, a new lead goes at once.
    expect(names(p.due(2000))).toEqual([7, 8, 9]);
    expect(p.busy(2059)).toBe(true);
    expect(p.busy(2060)).toBe(false);
  });

  it("a late tick catches up at once; an idle pacer restarts its clock at the next frame", () => {
    const p = new Pacer(2);
    p.enqueue(frame(1));
    expect(names(p.due(0))).toEqual([1]);
    // Long idle: the next frame plays from now, not from the old clock.
    p.enqueue(frame(2));
    p.enqueue(frame(3));
    p.enqueue(frame(4));
    expect(names(p.due(5000))).toEqual([2, 3]);
    expect(names(p.due(5020))).toEqual([4]);
  });

  it("marks are sent in order after their frames and known played when the clock passes them", () => {
    const p = new Pacer(1);
    p.enqueue(frame(1));
    p.enqueue(frame(2));
    p.mark("sentence-1");
    p.enqueue(frame(3));
    expect(names(p.due(0))).toEqual([1]);
    expect(names(p.due(20))).toEqual([2, "sentence-1"]);
    expect(p.played(39)).toEqual([]);
    expect(p.played(40)).toEqual(["sentence-1"]);
    expect(p.played(40)).toEqual([]);
  });

  it("clear drops what is not sent, stops within the lead, and names the marks that will never play", () => {
    const p = new Pacer(2);
    for (let i = 0; i < 5; i++) p.enqueue(frame(i));
    p.mark("a");
    p.enqueue(frame(9));
    p.mark("b");
    expect(names(p.due(0))).toEqual([0, 1]);
    expect(p.clear(10)).toEqual(["a", "b"]);
    expect(p.pending).toBe(0);
    expect(names(p.due(100))).toEqual([]);
    expect(p.busy(100)).toBe(false);
    // A sent mark still ahead of the clock is dropped too.
    p.enqueue(frame(1));
    p.mark("c");
    expect(names(p.due(200))).toEqual([1, "c"]);
    expect(p.clear(205)).toEqual(["c"]);
    expect(p.played(1000)).toEqual([]);
  });
});

describe("Recorder", () => {
  const frame = (v: number, n = 4) => new Int16Array(n).fill(v);
  // Stored as μ-law, a byte per channel: what a sample reads back as is its G.711 quantization.
  const samplesOf = (bytes: Uint8Array) => g711Decode("mulaw", bytes);
  const q = (v: number) => g711Decode("mulaw", g711Encode("mulaw", Int16Array.of(v)))[0];

  it("writes one stereo frame per tick, the callee left and the agent's frame that plays then right, a μ-law byte each", () => {
    const r = new Recorder(8000, 1024);
    r.agentFrame(20, frame(700));
    expect(r.tick(20, frame(100))).toBeNull(); // [0, 20): no agent audio yet
    expect(r.tick(40, frame(-2000))).toBeNull(); // [20, 40): the agent's frame at 20
    const bytes = r.finish()!;
    expect(bytes.length).toBe(8 * 2);
    const [a, b, c] = [q(100), q(-2000), q(700)];
    expect([...samplesOf(bytes)]).toEqual([a, 0, a, 0, a, 0, a, 0, b, c, b, c, b, c, b, c]);
    // Within G.711's step at each level (about a sixteenth of the magnitude), never exact by accident.
    for (const [got, sent] of [
      [a, 100],
      [b, -2000],
      [c, 700],
    ])
      expect(Math.abs(got - sent)).toBeLessThanOrEqual(Math.abs(sent) / 16 + 8);
    expect([a, b, c]).not.toEqual([100, -2000, 700]);
    expect(r.written).toBe(16);
    expect(r.finish()).toBeNull();
  });

  it("hands out whole parts of the given size as they fill, and the rest at the end", () => {
    const r = new Recorder(8000, 12); // 6 stereo samples a part
    const parts: Uint8Array[] = [];
    for (let t = 1; t <= 5; t++) {
      const p = r.tick(t * 20, frame(t * 1000));
      if (p) parts.push(p);
    }
    expect(parts.map((p) => p.length)).toEqual([12, 12, 12]);
    const rest = r.finish()!;
    expect(rest.length).toBe(5 * 4 * 2 - 36);
    const left = [...samplesOf(Uint8Array.from([...parts.flatMap((p) => [...p]), ...rest]))].filter((_, i) => i % 2 === 0);
    expect(left).toEqual([1, 2, 3, 4, 5].flatMap((t) => Array(4).fill(q(t * 1000))));
    expect(r.written).toBe(40);
  });

  it("a short agent frame leaves μ-law silence after it; a skipped gap is silence on both sides", () => {
    const r = new Recorder(8000, 2048);
    r.agentFrame(0, frame(5000, 2));
    r.tick(20, frame(0));
    r.skip(20, 20);
    const all = [...samplesOf(r.finish()!)];
    expect(all.slice(0, 8)).toEqual([0, q(5000), 0, q(5000), 0, 0, 0, 0]);
    expect(all.length).toBe(8 + 2 * 160); // skip() writes the stream's 20 ms (160 samples at 8 kHz) per frame
    expect(all.slice(4).every((v) => v === 0)).toBe(true);
  });

  it("a barge-in takes the agent's unheard frames out", () => {
    const r = new Recorder(8000, 1024);
    r.agentFrame(0, frame(5000));
    r.agentFrame(20, frame(6000));
    r.agentFrame(40, frame(7000));
    r.dropAgentFrom(20);
    for (let t = 1; t <= 3; t++) r.tick(t * 20, frame(0));
    const right = [...samplesOf(r.finish()!)].filter((_, i) => i % 2 === 1);
    expect(right).toEqual([...Array(4).fill(q(5000)), 0, 0, 0, 0, 0, 0, 0, 0]);
  });
});

describe("a 30-minute call through the pacer and recorder", () => {
  it("keeps their state bounded: no queue, map or buffer grows with the call's length", () => {
    const pacer = new Pacer();
    const recorder = new Recorder(8000, 64_000);
    const frame = new Int16Array(160).fill(1000);
    const wire = new Uint8Array(160);
    let parts = 0;
    let peakQueue = 0;
    let peakAgent = 0;
    for (let clock = 20; clock <= 30 * 60 * 1000; clock += 20) {
      pacer.enqueue(wire);
      if (clock % 2000 === 0) pacer.mark(`m${clock}`);
      for (const item of pacer.due(clock)) if (item.kind === "frame") recorder.agentFrame(item.at, frame);
      pacer.played(clock);
      if (recorder.tick(clock, frame)) parts++;
      peakQueue = Math.max(peakQueue, (pacer as unknown as { queue: unknown[] }).queue.length);
      peakAgent = Math.max(peakAgent, (recorder as unknown as { agent: Map<number, unknown> }).agent.size);
    }
    expect(peakQueue).toBeLessThanOrEqual(2100);
    expect(peakAgent).toBeLessThanOrEqual(4);
    expect((pacer as unknown as { sentMarks: unknown[] }).sentMarks.length).toBeLessThanOrEqual(2);
    // 30 minutes of stereo μ-law at 8 kHz (a byte per channel: half of 16-bit PCM), handed out part by part.
    expect(parts * 64_000 + (recorder.finish()?.length ?? 0)).toBe(30 * 60 * 8000 * 2);
  });
});
