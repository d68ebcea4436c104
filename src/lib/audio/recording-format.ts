// How a call's recording is stored in R2 and turned back into a WAV. The object key's suffix says the format, so a
// recording needs no column or metadata to be read: `.ulaw` (G.711 μ-law, a byte per channel, stereo interleaved:
// what the recorder writes, half the bytes of PCM) or `.pcm` (16-bit little-endian stereo, every recording stored
// before that). Both are served as the same 16-bit PCM WAV, so a browser's <audio>, the tests and any analysis read
// either alike; the μ-law is decoded as it streams, and the WAV's length is known from the object's size alone.
import { g711Decode } from "./g711";
import { pcm16ToBytes } from "./pcm";
import { wavHeader } from "./wav";

export type RecordingCodec = "mulaw" | "pcm16";

/** The suffix of the recordings written now. */
export const RECORDING_SUFFIX = ".ulaw";

/** The stored format of a recording, by its key (anything but `.ulaw` is the original raw PCM). */
export const recordingCodecOf = (key: string): RecordingCodec => (key.endsWith(RECORDING_SUFFIX) ? "mulaw" : "pcm16");

/** Bytes of 16-bit PCM served for `storedBytes` of a recording in `codec`. */
export const servedPcmBytes = (codec: RecordingCodec, storedBytes: number): number => (codec === "mulaw" ? storedBytes * 2 : storedBytes);

/** The WAV's total length (the 44-byte header and the samples): the response's exact Content-Length. */
export const recordingWavBytes = (codec: RecordingCodec, storedBytes: number): number => 44 + servedPcmBytes(codec, storedBytes);

/** The 16-bit little-endian PCM of one stored chunk (μ-law is a byte a sample, so a chunk never splits a sample). */
export function recordingChunkToPcm(codec: RecordingCodec, chunk: Uint8Array): Uint8Array {
  return codec === "mulaw" ? pcm16ToBytes(g711Decode("mulaw", chunk)) : chunk;
}

/** The stored recording behind its WAV header, converted chunk by chunk as `body` hands it over. */
export function recordingWavStream(body: ReadableStream<Uint8Array>, storedBytes: number, codec: RecordingCodec, rate: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let headerSent = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(wavHeader(rate, 2, servedPcmBytes(codec, storedBytes)));
        return;
      }
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(recordingChunkToPcm(codec, value));
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
