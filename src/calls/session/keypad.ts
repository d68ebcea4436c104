// The keypad under the agent. In: a key the callee pressed, from the media stream or a carrier's callback, reaches
// the agent once (a carrier that reports a press both ways, like Telnyx's stream and its call.dtmf.received webhook,
// or Asterisk's media socket and its ARI events, is heard once), and counts as the callee's activity rather than
// silence. Out: the agent's keys go through the carrier's own DTMF command where it has one; otherwise, or when the
// carrier refuses, as in-band tones queued on the media path like speech (paced out, and in the recording).
import type { VoiceAgent } from "../../agent/voice-agent";
import { dtmfDigits, dtmfTones } from "../../lib/audio/dtmf";
import { log } from "../../lib/log";
import type { MediaLoop } from "./media-loop";
import type { CallPorts } from "./ports";

/**
 * How far apart two sources' reports of one press may be and still be one press: a webhook trails the stream by
 * network and queueing time, rarely more than a second; a callee pressing the same key twice from the same source is
 * always two presses.
 */
export const SAME_PRESS_MS = 2000;

type Press = { digit: string; source: string; at: number; paired: boolean };

/** Which reported presses are new: a press another source already reported (same key, within SAME_PRESS_MS) is not. */
export class PressLog {
  private recent: Press[] = [];

  accept(digit: string, source: string, now: number): boolean {
    this.recent = this.recent.filter((p) => now - p.at <= SAME_PRESS_MS);
    const twin = this.recent.find((p) => !p.paired && p.source !== source && p.digit === digit);
    if (twin) {
      twin.paired = true;
      return false;
    }
    this.recent.push({ digit, source, at: now, paired: false });
    return true;
  }
}

/** One key as a carrier reports it (a digit, `*`, `#`, A-D in either case), or null. */
export function oneKey(digit: unknown): string | null {
  const d = typeof digit === "number" ? String(digit) : typeof digit === "string" ? digit.trim() : "";
  return /^[0-9*#A-D]$/i.test(d) ? d.toUpperCase() : null;
}

/** What of the live call the keypad needs. */
export type KeypadCall = { started: boolean; agent: VoiceAgent; loop: MediaLoop; lastActivityWall: number };

export class Keypad {
  private readonly presses = new PressLog();

  /** A key the callee pressed, from `source` (`stream`, `callback`): true when it reached the agent. */
  async press(call: KeypadCall, digit: unknown, source: string, now = Date.now()): Promise<boolean> {
    const key = oneKey(digit);
    if (!call.started || key === null) return false;
    call.lastActivityWall = now;
    if (!this.presses.accept(key, source, now)) return false;
    await call.agent.onDtmf?.(key, call.loop.clockMs);
    return true;
  }

  /**
   * The agent's keys: the carrier's command (the calls module's `sendDtmf` answers false where it has none); else, or
   * when it fails, tones queued at the call's rate. Throws on a string that is not keys, before anything is sent.
   */
  async send(loop: MediaLoop, digits: string, run: { orgId: number; runId: number | null }, calls: Pick<CallPorts, "sendDtmf">): Promise<void> {
    const keys = dtmfDigits(digits);
    if (keys === null) throw new Error("DTMF digits are 1 to 64 of 0-9, *, #, A-D, w (half a second) and W (a second)");
    try {
      if (run.runId !== null && (await calls.sendDtmf(run.orgId, run.runId, keys))) return;
    } catch (err) {
      log("warning", "dtmf_command_failed", { run_id: run.runId, error: String((err as Error)?.message ?? err).slice(0, 300) });
    }
    const rate = loop.format.rate;
    loop.say(dtmfTones(keys, rate), rate);
  }
}
