// WAV (RIFF) for 16-bit linear PCM: reading the clips a greeting or a test plays, and the header of a recording.

import { pcm16ToBytes } from "./pcm";

export type Pcm = { samples: Int16Array; rate: number; channels: number };

/** Reads a 16-bit PCM WAV; anything else (another codec or sample size, a truncated file) is refused. */
export function readWav(bytes: Uint8Array): Pcm {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]);
  if (bytes.length < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE") throw new Error("not a WAV file");
  let fmt: { channels: number; rate: number; bits: number; format: number } | null = null;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === "fmt ") {
      fmt = {
        format: view.getUint16(body, true),
        channels: view.getUint16(body + 2, true),
        rate: view.getUint32(body + 4, true),
        bits: view.getUint16(body + 14, true),
      };
    } else if (id === "data") {
      // 1 is PCM; 0xfffe (extensible) carries PCM in its sub-format, which the 16-bit check below covers.
      if (!fmt || (fmt.format !== 1 && fmt.format !== 0xfffe) || fmt.bits !== 16) throw new Error("not 16-bit PCM");
      const end = Math.min(body + size, bytes.length);
      const samples = new Int16Array((end - body) >> 1);
      for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(body + i * 2, true);
      return { samples, rate: fmt.rate, channels: fmt.channels };
    }
    at = body + size + (size & 1);
  }
  throw new Error("no audio data in the WAV file");
}

/** A whole 16-bit PCM WAV file of interleaved `samples`. */
export function wavFile(samples: Int16Array, rate: number, channels = 1): Uint8Array {
  const out = new Uint8Array(44 + samples.length * 2);
  out.set(wavHeader(rate, channels, samples.length * 2));
  pcm16ToBytes(samples, out.subarray(44));
  return out;
}

/** The 44-byte header of a 16-bit PCM WAV holding `dataBytes` of samples. */
export function wavHeader(rate: number, channels: number, dataBytes: number): Uint8Array {
  const h = new Uint8Array(44);
  const v = new DataView(h.buffer);
  const put = (at: number, s: string) => {
    for (let i = 0; i < 4; i++) h[at + i] = s.charCodeAt(i);
  };
  put(0, "RIFF");
  v.setUint32(4, 36 + dataBytes, true);
  put(8, "WAVE");
  put(12, "fmt ");
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, channels, true);
  v.setUint32(24, rate, true);
  v.setUint32(28, rate * channels * 2, true);
  v.setUint16(32, channels * 2, true);
  v.setUint16(34, 16, true);
  put(36, "data");
  v.setUint32(40, dataBytes, true);
  return h;
}
