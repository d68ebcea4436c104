// The simulator as a running carrier plays the callee's side of a media stream: when an answer document connects
// the call's audio to a WebSocket, it opens it, speaks for two seconds (a warbling tone, loud enough to count as
// speech), stays quiet for one and hangs up, in real time, in the carrier's own protocol.
import { CALLEE_PROTOCOLS, CalleeStream, type MediaProvider } from "./callee";

/** The WebSocket URL an answer document (TwiML/CXML, Plivo XML or an NCCO) connects the call's audio to. */
export function streamUrlIn(body: string): string | null {
  const attr = /<Stream\b[^>]*\burl="(wss?:\/\/[^"]+)"/.exec(body) ?? /<Stream\b[^>]*>(wss?:\/\/[^<]+)<\/Stream>/.exec(body);
  if (attr) return attr[1].replace(/&amp;/g, "&");
  try {
    const ncco = JSON.parse(body);
    for (const action of Array.isArray(ncco) ? ncco : []) {
      for (const e of action?.endpoint ?? []) if (e?.type === "websocket" && typeof e.uri === "string") return e.uri;
    }
  } catch {
    // not JSON: no stream
  }
  return null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function playCallee(provider: string, url: string, callId: string): Promise<void> {
  const protocol = CALLEE_PROTOCOLS[provider as MediaProvider];
  if (!protocol) return;
  const res = await fetch(url.replace(/^ws/, "http"), { headers: { Upgrade: "websocket" } });
  if (!res.webSocket) return;
  res.webSocket.accept();
  const callee = new CalleeStream(res.webSocket, protocol);
  callee.open(callId);
  const rate = protocol.format.rate;
  const n = rate / 50;
  for (let i = 0; i < 150 && !callee.closed; i++) {
    if (i < 100) {
      const hz = i % 20 < 10 ? 300 : 450;
      callee.speak(Int16Array.from({ length: n }, (_, k) => Math.round(6000 * Math.sin((2 * Math.PI * hz * (i * n + k)) / rate))));
    } else callee.silence(20);
    await sleep(20);
  }
  if (!callee.closed) callee.hangup();
}
