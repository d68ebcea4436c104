// The per-frame path of a call session without its socket: a μ-law frame in, decoded, framed, the echo agent's
// reply resampled to 16 kHz and back (what a speech engine's rate costs), encoded, paced and written as Twilio's
// JSON message. Bundled by run.mjs and timed in Node, frame by frame.
import { Framer } from "../../src/lib/audio/framer";
import { g711Decode, g711Encode } from "../../src/lib/audio/g711";
import { isVoiced } from "../../src/lib/audio/level";
import { Pacer } from "../../src/lib/audio/pacer";
import { Resampler } from "../../src/lib/audio/resample";
import { twilioMedia } from "../../src/telephony/providers/twilio/media";

export function tone(frames: number): string[] {
  const samples = Int16Array.from({ length: frames * 160 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));
  const wire = g711Encode("mulaw", samples);
  return Array.from({ length: frames }, (_, k) => twilioMedia.audio(wire.subarray(k * 160, (k + 1) * 160), "MZbench"));
}

/** Runs `messages` through the path; returns each frame's time in microseconds. */
export function timePath(messages: string[]): number[] {
  const inbound = new Framer(160);
  const outbound = new Framer(160);
  const pacer = new Pacer();
  const up = new Resampler(8000, 16000);
  const down = new Resampler(16000, 8000);
  const pcm = new Int16Array(160);
  const times: number[] = [];
  let clock = 0;
  let sent = 0;
  for (const message of messages) {
    const t0 = performance.now();
    for (const ev of twilioMedia.parse(message)) {
      if (ev.kind !== "audio") continue;
      inbound.push(ev.payload, (frame) => {
        clock += 20;
        const samples = g711Decode("mulaw", frame, pcm);
        if (isVoiced(samples)) outbound.push(g711Encode("mulaw", down.convert(up.convert(samples))), (f) => pacer.enqueue(f));
      });
    }
    for (const item of pacer.due(clock)) if (item.kind === "frame") sent += twilioMedia.audio(item.frame, "MZbench").length;
    times.push((performance.now() - t0) * 1000);
  }
  if (!sent) throw new Error("nothing went out");
  return times;
}
