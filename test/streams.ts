// Bodies for tests that arrive as a network delivers them: in pieces (pure, for the Node and Workers projects alike).

/** `bytes` as a stream of `size`-byte pieces, pulled one at a time (a piece may end inside a character or a row). */
export function inPieces(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}
