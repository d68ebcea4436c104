// Opening an outbound WebSocket from a Worker: an http(s) fetch with an Upgrade header, whose Response carries
// the socket. The time limit covers the handshake only: a signal given to that fetch keeps watching the upgraded
// socket, and firing later cuts it (a close 1006 with no reason).

/** The handshake's Response (a 101 with `webSocket`, or the refusal), rejecting after `timeoutMs` without one. */
export async function openWebSocket(url: string, headers: Record<string, string>, timeoutMs: number): Promise<Response> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error(`WebSocket handshake timed out after ${timeoutMs} ms`)), timeoutMs);
  try {
    return await fetch(url, { headers: { ...headers, Upgrade: "websocket" }, signal: abort.signal });
  } finally {
    clearTimeout(timer);
  }
}
