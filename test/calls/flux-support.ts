// Deepgram Flux's socket as the tests' fakes of the AI binding serve it: the agent's PCM comes in as binary messages,
// handled strictly one after another (a binary one may arrive as a Blob); `CloseStream` closes it. `send` puts a
// TurnInfo event on the socket.

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
