// Linear PCM as carriers put it on the wire: 16-bit little-endian samples. Workers run on little-endian hosts,
// but the byte order is spelled out so the format does not depend on the machine.

/** Reads 16-bit little-endian samples from `bytes` (an odd trailing byte is ignored). */
export function pcm16FromBytes(bytes: Uint8Array, out: Int16Array = new Int16Array(bytes.length >> 1)): Int16Array {
  const n = bytes.length >> 1;
  for (let i = 0, j = 0; i < n; i++, j += 2) out[i] = ((bytes[j] | (bytes[j + 1] << 8)) << 16) >> 16;
  return out.length === n ? out : out.subarray(0, n);
}

/** Writes samples as 16-bit little-endian bytes. */
export function pcm16ToBytes(samples: Int16Array, out: Uint8Array = new Uint8Array(samples.length * 2)): Uint8Array {
  for (let i = 0, j = 0; i < samples.length; i++, j += 2) {
    const s = samples[i];
    out[j] = s & 0xff;
    out[j + 1] = (s >> 8) & 0xff;
  }
  return out.length === samples.length * 2 ? out : out.subarray(0, samples.length * 2);
}

export function base64ToBytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function bytesToBase64(bytes: Uint8Array): string {
  let bin = "";
  // Chunks keep String.fromCharCode's argument list short; `apply` takes the typed array as it is (spreading it walks
  // an iterator byte by byte: about 8 times slower for a 20 ms frame, and this runs for every frame sent).
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000) as unknown as number[]);
  return btoa(bin);
}
