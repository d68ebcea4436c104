// Deepgram's sockets as the tests' fakes of the AI binding serve them. Flux: the agent's PCM comes in as binary
// messages, handled strictly one after another (a binary one may arrive as a Blob); `CloseStream` closes it; `send`
// puts a TurnInfo event on the socket. The live protocol (Nova-3): the PCM is kept, and at `CloseStream` the final
// result for all of it is sent, then the close.

export type FluxSocket = { send(event: string, transcript: string): void };

/** The 101 answer to a Flux request; `chunk` sees each piece of PCM in order, with `send` for its TurnInfo events. */
export function fluxSocket(chunk: (samples: Int16Array, flux: FluxSocket) => void | Promise<void>): Response {
  const [client, server] = Object.values(new WebSocketPair());
  server.accept();
  const flux: FluxSocket = {
    send: (event, transcript) => server.send(JSON.stringify({ type: "TurnInfo", event, turn_index: 0, transcript, end_of_turn_confidence: 0.9 })),
  };
  let chain = Promise.resolve();
  server.addEventListener("message", (e) => {
    const data = e.data;
    chain = chain.then(async () => {
      if (typeof data === "string") {
        if (JSON.parse(data).type === "CloseStream") server.close(1000, "done");
        return;
      }
      await chunk(new Int16Array(await new Response(data as ArrayBuffer).arrayBuffer()), flux);
    });
  });
  return new Response(null, { status: 101, webSocket: client });
}

/** The 101 answer to a live (Nova-3) request; `transcribe` gives the words of the whole turn's PCM at CloseStream. */
export function deepgramLiveSocket(transcribe: (samples: Int16Array) => Promise<string>): Response {
  const [client, server] = Object.values(new WebSocketPair());
  server.accept();
  // Binary messages may arrive as Blobs: read in arrival order.
  const pending: Promise<Uint8Array>[] = [];
  const answer = async () => {
    const parts = await Promise.all(pending);
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      bytes.set(p, at);
      at += p.length;
    }
    const transcript = await transcribe(new Int16Array(bytes.buffer, 0, bytes.length >> 1));
    server.send(JSON.stringify({ type: "Results", is_final: true, channel: { alternatives: [{ transcript }] } }));
    server.close(1000, "done");
  };
  server.addEventListener("message", (e) => {
    if (typeof e.data !== "string") pending.push(new Response(e.data as ArrayBuffer | Blob).arrayBuffer().then((b) => new Uint8Array(b)));
    else if (JSON.parse(e.data).type === "CloseStream") void answer();
  });
  return new Response(null, { status: 101, webSocket: client });
}
