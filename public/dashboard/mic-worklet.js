// The microphone's side of a web call (docs/web-calls.md), on the audio thread: the context's input (44.1 or 48 kHz
// float) downsampled to 16 kHz, cut into 20 ms frames of 16-bit little-endian PCM, each posted to the page, which
// sends it on the call's WebSocket. Each output sample averages the input samples its interval covers (a box
// filter): cheap, and enough against aliasing for speech going to a speech recognizer.
const TARGET_RATE = 16000;
const FRAME = 320; // 20 ms at 16 kHz

class MicPcm16 extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / TARGET_RATE; // input samples per output sample
    this.acc = 0;
    this.count = 0;
    this.pos = 0; // how far into the current output interval, in input samples
    this.frame = new Int16Array(FRAME);
    this.filled = 0;
  }

  process(inputs) {
    const channel = inputs[0]?.[0];
    if (!channel) return true;
    for (let i = 0; i < channel.length; i++) {
      this.acc += channel[i];
      this.count++;
      this.pos++;
      if (this.pos < this.step) continue;
      this.pos -= this.step;
      const v = Math.max(-1, Math.min(1, this.acc / this.count));
      this.acc = 0;
      this.count = 0;
      this.frame[this.filled++] = v < 0 ? v * 0x8000 : v * 0x7fff;
      if (this.filled === FRAME) {
        // Int16Array is little-endian on every platform browsers run on; the server reads it as such.
        const out = this.frame.buffer;
        this.port.postMessage(out, [out]);
        this.frame = new Int16Array(FRAME);
        this.filled = 0;
      }
    }
    return true;
  }
}

registerProcessor("mic-pcm16", MicPcm16);
