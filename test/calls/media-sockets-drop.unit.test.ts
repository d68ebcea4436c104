// A media socket's excess is dropped before it is handled (docs/live-calls.md, "Bad peers": 1,000 messages a second
// with a burst of 1,000, 256 kB/s with 1 MB at once). Judged at the session's side (MediaSockets.admit) with nothing
// waiting, so the queue's own limit cannot hide a drop the guard decided; bounds are the documented numbers.
import { describe, expect, it } from "vitest";
import { MediaSockets } from "../../src/calls/session/media-sockets";

const socket = () => ({}) as WebSocket;
const frame = new ArrayBuffer(160);

describe("the media sockets' input limits", () => {
  it("of 1,001 messages at one instant, 1,000 are handed on and the last is dropped; a second later 1,000 more pass", () => {
    const sockets = new MediaSockets();
    const ws = socket();
    for (let i = 0; i < 1000; i++) expect(sockets.admit(ws, frame, 0)).toHaveProperty("guard");
    expect(sockets.admit(ws, frame, 0)).toBeNull();
    // Still within the 3 s before a flood: each message over the limit is dropped, not handed on.
    expect(sockets.admit(ws, frame, 500)).not.toBeNull();
    for (let i = 0; i < 2000; i++) sockets.admit(ws, frame, 500);
    expect(sockets.admit(ws, frame, 500)).toBeNull();
    const fresh = socket();
    for (let i = 0; i < 1000; i++) expect(sockets.admit(fresh, "{}", 10_000)).toHaveProperty("guard");
    expect(sockets.admit(fresh, "{}", 10_000)).toBeNull();
    expect(sockets.admit(fresh, "{}", 10_999)).not.toBeNull();
  });

  it("1 MB at once passes; one byte more at the same instant is dropped, and counted", () => {
    const sockets = new MediaSockets();
    const ws = socket();
    const admitted = sockets.admit(ws, new ArrayBuffer(1024 * 1024), 0);
    expect(admitted).toHaveProperty("guard");
    const guard = (admitted as { guard: { dropped: number } }).guard;
    expect(sockets.admit(ws, new ArrayBuffer(1), 0)).toBeNull();
    expect(guard.dropped).toBe(1);
    // 256 kB a second refills it: after a second, 256 kB passes again.
    expect(sockets.admit(ws, new ArrayBuffer(256 * 1024), 1000)).toHaveProperty("guard");
    expect(sockets.admit(ws, new ArrayBuffer(1024), 1000)).toBeNull();
  });

  it("each socket has its own limits", () => {
    const sockets = new MediaSockets();
    const a = socket();
    for (let i = 0; i <= 1000; i++) sockets.admit(a, frame, 0);
    expect(sockets.admit(a, frame, 0)).toBeNull();
    expect(sockets.admit(socket(), frame, 0)).toHaveProperty("guard");
  });
});
