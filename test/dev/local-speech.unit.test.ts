// The local speech server's resampling (scripts/lib/local-speech.mjs): eSpeak NG speaks at 22050 Hz and the agent
// asks for 8, 16 or 24 kHz. What the server answers is checked from the Worker's side, against the real server:
// test/agent/local-speech.test.ts (this project runs in workerd, which cannot listen on a port).
import { describe, expect, it } from "vitest";
import { resample } from "../../scripts/lib/local-speech.mjs";

describe("its resampling", () => {
  it("keeps a tone's pitch and loudness, and removes what the lower rate cannot hold", () => {
    const tone = (hz: number, rate: number) => Int16Array.from({ length: rate }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / rate)));
    const zeroCrossings = (s: Int16Array) => s.reduce((n, v, i) => n + (i > 0 && s[i - 1] < 0 !== v < 0 ? 1 : 0), 0);
    const rms = (s: Int16Array) => Math.sqrt(s.reduce((a, v) => a + v * v, 0) / s.length);
    const down = resample(tone(1000, 22050), 22050, 8000);
    expect(down.length).toBe(8000);
    expect(Math.abs(zeroCrossings(down) - 2000)).toBeLessThan(5);
    expect(rms(down) / rms(tone(1000, 22050))).toBeGreaterThan(0.9);
    // 6 kHz is above 8 kHz's Nyquist frequency: it must not fold back as a 2 kHz whistle.
    expect(rms(resample(tone(6000, 22050), 22050, 8000))).toBeLessThan(0.05 * 8000);
  });
});
