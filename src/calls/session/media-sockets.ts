// The media sockets a call session holds, and what each may send. Taken in the object's own event loop (not the
// hibernation API): a call streams audio all the time, so the object never sleeps anyway, and a hibernatable socket
// costs a full event per message, which under a flood starved the other calls of the runtime. The input guard runs
// before any parsing, so a flood costs little; at most a second of messages waits its turn, the rest is dropped.
import { InputGuard } from "./input-guard";

/** Media messages that may wait their turn (a second of audio); more are dropped. */
const MAX_WAITING = 50;

export type Admitted = { guard: InputGuard } | { flood: InputGuard } | null;

export class MediaSockets {
  private readonly attached = new Set<WebSocket>();
  /** Sockets a reconnect replaced: what they still send or report is ignored. */
  private readonly superseded = new WeakSet<WebSocket>();
  private readonly guards = new WeakMap<WebSocket, InputGuard>();
  /** Messages queued behind the one being handled. */
  waiting = 0;

  /** Accepts the socket and hands its messages and its close to the session. */
  attach(ws: WebSocket, on: { message(data: string | ArrayBuffer): void; close(): void }): void {
    ws.accept();
    (ws as { binaryType?: string }).binaryType = "arraybuffer";
    this.attached.add(ws);
    ws.addEventListener("message", (e) => on.message(e.data as string | ArrayBuffer));
    ws.addEventListener("close", () => on.close());
    ws.addEventListener("error", () => on.close());
  }

  /** The sockets carrying the call's media now (at most one). */
  current(): WebSocket[] {
    return [...this.attached].filter((ws) => !this.superseded.has(ws) && ws.readyState <= 1);
  }

  isSuperseded(ws: WebSocket): boolean {
    return this.superseded.has(ws);
  }

  /** A socket closed: no longer the call's. */
  drop(ws: WebSocket): void {
    this.attached.delete(ws);
  }

  /** A reconnect: the sockets held so far give way (closed, and ignored from now on). */
  supersedeAll(): void {
    for (const ws of this.current()) {
      this.superseded.add(ws);
      try {
        ws.close(1000, "superseded by a reconnection");
      } catch {
        // already gone
      }
    }
    this.attached.clear();
  }

  /** Whether a message goes on to be handled (with its socket's guard), is dropped (null), or shows a flood. */
  admit(ws: WebSocket, message: string | ArrayBuffer, now: number): Admitted {
    const guard = this.guards.get(ws) ?? new InputGuard();
    this.guards.set(ws, guard);
    const verdict = guard.admit(typeof message === "string" ? message.length : message.byteLength, now);
    if (verdict === "drop") return null;
    if (verdict === "flood") return { flood: guard };
    // Past a second's worth waiting, the session is behind, and more only deepens that.
    if (this.waiting >= MAX_WAITING) {
      guard.dropped++;
      return null;
    }
    return { guard };
  }
}
