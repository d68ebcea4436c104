// The simulator as a running carrier plays the callee's side of a media stream: when an answer document connects
// the call's audio to a WebSocket, it opens it and, in real time and the carrier's own protocol, either speaks for two
// seconds (a warbling tone, loud enough to count as speech), stays quiet for one and hangs up, or, given the callee's
// lines, holds a conversation: each line is said once the agent has answered the last one and finished talking, and the
// callee then waits for the agent to end the call.
import { Resampler, type SampleRate } from "../../../lib/audio/resample";
import { reach } from "../reach";
import { CALLEE_PROTOCOLS, CalleeStream, type MediaProvider } from "./callee";

/** The agent's silence (after it spoke) that gives the callee the turn. */
const AGENT_DONE_MS = 800;
/**
 * After a line of the callee's, the agent's answer is awaited this long before the next line is said anyway (an agent
 * that never answers, a greeting-only one). Until then the callee waits, as a person does: its quiet before the reply
 * starts is the agent thinking, not the agent done (a busy machine's reply took over 800 ms, and the next line cut the
 * question off before a word of it was heard: the README tour's flake).
 */
const NO_REPLY_MS = 5000;
/** A conversation the agent never ends is hung up after this long. */
const MAX_CONVERSATION_MS = 60_000;

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

/**
 * How long to wait before the frame due `ms` after `start`: a carrier sends 20 ms of audio every 20 ms of wall time,
 * so a late timer (a busy machine) is caught up, not added to the call. Twenty sleeps of 20 ms drifted a 9 s
 * conversation to 13 s, and the carrier's duration (wall time) then disagreed with the recording (the frames).
 */
export function untilFrame(start: number, ms: number, now: number): number {
  return Math.max(0, start + ms - now);
}

export async function playCallee(
  provider: string,
  url: string,
  callId: string,
  lines?: Int16Array[],
  headers: Record<string, string> = {},
  /** Given the open stream (the sandbox presses keys on it, and ends it when a transfer replaces the call's TwiML). */
  onOpen?: (callee: CalleeStream) => void,
): Promise<void> {
  const protocol = CALLEE_PROTOCOLS[provider as MediaProvider];
  if (!protocol) return;
  const res = await reach(url.replace(/^ws/, "http"), { headers: { ...headers, Upgrade: "websocket" } });
  if (!res.webSocket) return;
  res.webSocket.accept();
  const callee = new CalleeStream(res.webSocket, protocol);
  callee.open(callId);
  onOpen?.(callee);
  const rate = protocol.format.rate;
  if (lines?.length) return converse(callee, lines, rate);
  const n = rate / 50;
  const start = Date.now();
  for (let i = 0; i < 150 && !callee.closed; i++) {
    if (i < 100) {
      const hz = i % 20 < 10 ? 300 : 450;
      callee.speak(Int16Array.from({ length: n }, (_, k) => Math.round(6000 * Math.sin((2 * Math.PI * hz * (i * n + k)) / rate))));
    } else callee.silence(20);
    await sleep(untilFrame(start, (i + 1) * 20, Date.now()));
  }
  if (!callee.closed) callee.hangup();
}

/**
 * When the callee speaks next, 20 ms at a time: given how many of the agent's messages have arrived so far, `tick`
 * says whether the callee's next line starts now. Pure, for the unit tests (test/telephony/sim-pacing.unit.test.ts).
 * The agent-test caller follows the same rule for a scripted `say` (`agentDone` in src/agent-tests/caller.ts).
 */
export class CalleeTurns {
  private heard = 0;
  private quietMs = 0;
  /** Whether the agent has spoken since the callee's last line (or at all, before the first). */
  private answered = false;
  private said = 0;
  private waitedMs = 0;

  /** A quiet 20 ms of the callee's: true when its next line starts now. */
  tick(received: number): boolean {
    if (received > this.heard) {
      this.quietMs = 0;
      this.answered = true;
    } else this.quietMs += 20;
    this.heard = received;
    this.waitedMs += 20;
    // The agent answered and has been quiet a moment (or never answered the last line): the callee's turn.
    if (!((this.answered && this.quietMs >= AGENT_DONE_MS) || (this.said > 0 && this.waitedMs >= NO_REPLY_MS))) return false;
    this.quietMs = 0;
    this.waitedMs = 0;
    this.answered = false;
    this.said++;
    return true;
  }

  /** The callee's line ended: only what the agent says after it answers it. */
  lineDone(received: number): void {
    this.heard = received;
  }
}

/** Says each line when the agent has had its say, 20 ms at a time in real time, keeping the line's clock running. */
async function converse(callee: CalleeStream, lines: Int16Array[], rate: SampleRate): Promise<void> {
  const n = rate / 50;
  const queue = lines.map((l) => (rate === 8000 ? l : new Resampler(8000, rate).convert(l)));
  const turns = new CalleeTurns();
  let saying: Int16Array | null = null;
  let at = 0;
  const start = Date.now();
  for (let t = 0; t < MAX_CONVERSATION_MS && !callee.closed; t += 20) {
    if (saying) {
      callee.speak(saying.subarray(at, at + n));
      at += n;
      if (at >= saying.length) {
        saying = null;
        turns.lineDone(callee.received.length);
      }
    } else {
      callee.silence(20);
      if (turns.tick(callee.received.length) && queue.length) {
        saying = queue.shift()!;
        at = 0;
      }
    }
    await sleep(untilFrame(start, t + 20, Date.now()));
  }
  if (!callee.closed) callee.hangup();
}
