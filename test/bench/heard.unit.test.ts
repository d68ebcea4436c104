// The e2e voice bench's arithmetic: 1x playout of frames as they arrive, the first audio heard, gaps between voiced
// frames, and nearest-rank percentiles.
import { describe, expect, it } from "vitest";
import { Playback, percentile } from "../../bench/voice/heard";

describe("bench/voice heard", () => {
  it("plays audio sent ahead at 1x and counts a late frame's wait as a gap", () => {
    const p = new Playback();
    p.frame(0, false); // silence before the reply
    // Three voiced frames arrive at once at 100 ms: they play at 100, 120, 140.
    expect([p.frame(100, true), p.frame(100, true), p.frame(100, true)]).toEqual([100, 120, 140]);
    // The next arrives at 230, 70 ms after the last one stopped playing (160).
    expect(p.frame(230, true)).toBe(230);
    // The gap began after 60 ms of the reply had played.
    expect(p.take()).toEqual({ firstAudioAt: 100, longestGapMs: 70, longestGapAfterMs: 60, frames: 4 });
    // The next reply starts fresh; queued silence delays its first audio.
    p.frame(300, false);
    p.frame(300, false);
    p.frame(305, true);
    expect(p.take()).toEqual({ firstAudioAt: 340, longestGapMs: 0, longestGapAfterMs: null, frames: 1 });
  });

  it("percentiles by nearest rank", () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(xs, 50), percentile(xs, 95), percentile(xs, 99), percentile(xs, 100)]).toEqual([50, 95, 99, 100]);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });
});
