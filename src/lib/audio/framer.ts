// Cuts a byte stream into fixed 20 ms frames: carriers send and accept audio in pieces of any size, while the
// pacer, the recorder and the agent work in whole frames. One buffer per stream; a frame is a fresh copy, so the
// caller may keep it.

export const FRAME_MS = 20;

/** Bytes in one 20 ms frame of `bytesPerSample`-byte samples at `rate`. */
export const frameBytes = (rate: number, bytesPerSample: number) => (rate * FRAME_MS * bytesPerSample) / 1000;

export class Framer {
  private readonly buf: Uint8Array;
  private fill = 0;

  constructor(readonly size: number) {
    this.buf = new Uint8Array(size);
  }

  /** Adds bytes; calls `onFrame` for every frame they complete. */
  push(bytes: Uint8Array, onFrame: (frame: Uint8Array) => void): void {
    let i = 0;
    while (i < bytes.length) {
      const take = Math.min(this.size - this.fill, bytes.length - i);
      this.buf.set(bytes.subarray(i, i + take), this.fill);
      this.fill += take;
      i += take;
      if (this.fill === this.size) {
        onFrame(this.buf.slice());
        this.fill = 0;
      }
    }
  }

  /** The partial frame left over, padded with `silence` to a whole frame (null when nothing is left). */
  flush(silence: number): Uint8Array | null {
    if (!this.fill) return null;
    const frame = new Uint8Array(this.size).fill(silence);
    frame.set(this.buf.subarray(0, this.fill));
    this.fill = 0;
    return frame;
  }

  /** Drops the partial frame (barge-in: what the agent had not finished saying is not sent). */
  reset(): void {
    this.fill = 0;
  }
}
