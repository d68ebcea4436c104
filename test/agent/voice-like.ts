// Whether audio sounds like a voice rather than a tone, by three measures a tone fails and speech passes: the pitch
// moves (a voice's intonation; a tone's stays put), the energy is spread over the speech band (formants; a tone has
// one line), and the loudness rises and falls with the syllables (a tone is level). Pure, for Node and workerd tests.

export type VoiceMeasures = {
  /** Seconds of audio loud enough to measure. */
  activeSeconds: number;
  /** Frames whose pitch could be measured (voiced). */
  voicedFrames: number;
  /** The spread of the pitch over voiced frames: the 90th percentile less the 10th, in Hz. */
  pitchSpreadHz: number;
  /** Of the 8 bands from 200 to 3400 Hz, how many hold at least 3% of the energy. */
  bandsUsed: number;
  /** The share of the energy from 1000 to 3400 Hz (formants above the first). */
  upperShare: number;
  /** The loudness's standard deviation over its mean, over the active 20 ms frames. */
  loudnessVariation: number;
};

/** In-place radix-2 FFT of `re`/`im` (length a power of two). */
function fft(re: Float64Array, im: Float64Array) {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j], re[i]];
      [im[i], im[j]] = [im[j], im[i]];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const a = (-2 * Math.PI) / len;
    for (let i = 0; i < n; i += len)
      for (let k = 0; k < len / 2; k++) {
        const wr = Math.cos(a * k);
        const wi = Math.sin(a * k);
        const xr = re[i + k + len / 2] * wr - im[i + k + len / 2] * wi;
        const xi = re[i + k + len / 2] * wi + im[i + k + len / 2] * wr;
        re[i + k + len / 2] = re[i + k] - xr;
        im[i + k + len / 2] = im[i + k] - xi;
        re[i + k] += xr;
        im[i + k] += xi;
      }
  }
}

const rmsOf = (s: Int16Array, from: number, to: number) => {
  let sum = 0;
  for (let i = from; i < to; i++) sum += s[i] * s[i];
  return Math.sqrt(sum / Math.max(1, to - from));
};

/** The pitch of a frame by autocorrelation (70 to 400 Hz), or null when it is not voiced. */
function pitchOf(s: Int16Array, from: number, n: number, rate: number): number | null {
  const lo = Math.floor(rate / 400);
  const hi = Math.ceil(rate / 70);
  if (from + n + hi > s.length) return null;
  let energy = 0;
  for (let i = 0; i < n; i++) energy += s[from + i] * s[from + i];
  if (!energy) return null;
  const r = new Float64Array(hi + 1);
  let best = 0;
  for (let lag = lo; lag <= hi; lag++) {
    let ab = 0;
    let bb = 0;
    for (let i = 0; i < n; i++) {
      ab += s[from + i] * s[from + i + lag];
      bb += s[from + i + lag] * s[from + i + lag];
    }
    r[lag] = bb ? ab / Math.sqrt(energy * bb) : 0;
    best = Math.max(best, r[lag]);
  }
  if (best < 0.5) return null;
  // The shortest period near the best (a multiple of the period correlates as well: not an octave lower).
  for (let lag = lo; lag <= hi; lag++) if (r[lag] >= 0.9 * best && r[lag] >= r[lag - 1] && r[lag] >= (r[lag + 1] ?? 0)) return rate / lag;
  return null;
}

export function voiceMeasures(samples: Int16Array, rate: number): VoiceMeasures {
  const frame = Math.round(rate / 50); // 20 ms
  const frames = Math.floor(samples.length / frame);
  const loud: number[] = [];
  for (let f = 0; f < frames; f++) loud.push(rmsOf(samples, f * frame, (f + 1) * frame));
  const peak = Math.max(0, ...loud);
  const active = loud.map((l, f) => [l, f] as const).filter(([l]) => l > Math.max(100, peak * 0.05));
  const pitches: number[] = [];
  const n = 256;
  const bands = new Float64Array(8);
  let upper = 0;
  let total = 0;
  for (const [, f] of active) {
    const p = pitchOf(samples, f * frame, Math.min(frame * 2, Math.round(rate * 0.03)), rate);
    if (p !== null) pitches.push(p);
    const re = new Float64Array(n);
    const im = new Float64Array(n);
    for (let i = 0; i < n && f * frame + i < samples.length; i++) re[i] = samples[f * frame + i] * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1)));
    fft(re, im);
    for (let k = 1; k < n / 2; k++) {
      const hz = (k * rate) / n;
      if (hz < 200 || hz > 3400) continue;
      const e = re[k] * re[k] + im[k] * im[k];
      bands[Math.min(7, Math.floor(((hz - 200) / 3200) * 8))] += e;
      total += e;
      if (hz >= 1000) upper += e;
    }
  }
  pitches.sort((a, b) => a - b);
  const pct = (q: number) => pitches[Math.min(pitches.length - 1, Math.floor(q * pitches.length))] ?? 0;
  const levels = active.map(([l]) => l);
  const mean = levels.reduce((a, b) => a + b, 0) / Math.max(1, levels.length);
  const sd = Math.sqrt(levels.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, levels.length));
  return {
    activeSeconds: (active.length * frame) / rate,
    voicedFrames: pitches.length,
    pitchSpreadHz: pct(0.9) - pct(0.1),
    bandsUsed: total ? [...bands].filter((e) => e / total >= 0.03).length : 0,
    upperShare: total ? upper / total : 0,
    loudnessVariation: mean ? sd / mean : 0,
  };
}

/** Voice-like: half a second or more of sound, a moving pitch, formant energy spread, syllables' rise and fall. */
export function isVoiceLike(m: VoiceMeasures): boolean {
  return m.activeSeconds >= 0.5 && m.voicedFrames >= 10 && m.pitchSpreadHz >= 15 && m.bandsUsed >= 3 && m.upperShare >= 0.05 && m.loudnessVariation >= 0.25;
}
