// Pushed progress: dashboards and clients watch a campaign over a WebSocket its object accepts with the hibernation
// API, so a watcher costs nothing while nothing changes. Each change the object settles is sent once, as the same
// progress GET /campaign/{id}/progress answers; identical snapshots are not repeated.

const TAG = "events";
/** The subprotocol a browser offers (with its API key beside it; it cannot set headers on a WebSocket). */
export const EVENTS_PROTOCOL = "edgedial.events";

export class CampaignEvents {
  /** The last snapshot sent (lost with hibernation: the first change after waking is sent whatever it was). */
  private last: string | null = null;

  constructor(private readonly ctx: DurableObjectState) {}

  /** Accepts a watcher and sends it the progress now. */
  accept(request: Request, progress: unknown): Response {
    const [client, server] = Object.values(new WebSocketPair());
    this.ctx.acceptWebSocket(server, [TAG]);
    server.send(message(progress));
    const offered = (request.headers.get("Sec-WebSocket-Protocol") ?? "").split(",").map((p) => p.trim());
    const headers: HeadersInit = offered.includes(EVENTS_PROTOCOL) ? { "Sec-WebSocket-Protocol": EVENTS_PROTOCOL } : {};
    return new Response(null, { status: 101, webSocket: client, headers });
  }

  /** Sends the progress to every watcher if it changed since the last send. */
  async publish(progress: () => Promise<unknown>): Promise<void> {
    const watchers = this.ctx.getWebSockets(TAG);
    if (!watchers.length) return;
    let text: string;
    try {
      text = message(await progress());
    } catch {
      return; // the campaign is gone (discarded): nothing to say
    }
    if (text === this.last) return;
    this.last = text;
    for (const ws of watchers) {
      try {
        ws.send(text);
      } catch {
        // closing: its close handler cleans up
      }
    }
  }

  /** Watchers only listen; a `ping` gets a `pong` (keep-alive through proxies). */
  onMessage(ws: WebSocket, data: string | ArrayBuffer): void {
    if (data === "ping") ws.send(JSON.stringify({ type: "pong" }));
  }

  onClose(ws: WebSocket, code: number, reason: string): void {
    try {
      ws.close(code === 1005 ? 1000 : code, reason);
    } catch {
      // already closed
    }
  }
}

const message = (progress: unknown) => JSON.stringify({ type: "progress", data: progress });
