// How loud a frame is, and whether that counts as someone speaking: a plain energy gate, enough to tell speech
// from a quiet line (the voice agent's turn detection builds on it).

/** A frame louder than this (RMS of 16-bit samples, about -36 dBFS) counts as speech. */
export const VOICE_RMS = 500;

export function rms(x: Int16Array): number {
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += x[i] * x[i];
  return Math.sqrt(sum / Math.max(1, x.length));
}

export const isVoiced = (x: Int16Array) => rms(x) >= VOICE_RMS;
