// The scripted caller of an agent test, on the carrier's side of the media stream: it plays its steps in real time
// (a 20 ms frame every 20 ms of wall time, as a carrier sends them), so the session's clocks, turn-taking and timing
// are those of a real call. A `say` or `press` waits for the agent to finish its turn; an `interrupt` speaks into the
// agent's turn; `pause` and `silence` send quiet. What it did, and when, is its log (evidence for the results).
import { Resampler, type SampleRate } from "../lib/audio/resample";
import type { CalleeStream } from "./callee";
import { callerVoice, VOICE_RATE } from "./caller-voice";
import type { ScriptStep } from "./schemas";

export type CallerEvent = { at_ms: number; step: number; action: string; detail?: string };

export type CallerTiming = {
  /** The agent's quiet (after it spoke) that gives the caller the turn. */
  agentDoneMs: number;
  /** A step waiting for the agent goes ahead anyway after this long with nothing heard (a mute agent). */
  waitAtMostMs: number;
  /** After the last step, how long the caller stays on the line for the agent to end the call. */
  tailMs: number;
};

export const CALLER_TIMING: CallerTiming = { agentDoneMs: 800, waitAtMostMs: 8000, tailMs: 20_000 };

/**
 * Lines decided during the call (a persona caller): asked whenever the caller has the turn and no step is left; a
 * line to say, or null when the caller is done (it then stays on the line as after a script's last step). On a
 * rejection the caller hangs up at once (the source keeps the reason for the results).
 */
export type LineSource = () => Promise<string | null>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A line's sound where the caller has one made for it (a real voice: caller-speech.ts); else the caller voice. */
export type VoiceOf = (text: string) => { samples: Int16Array; rate: SampleRate } | undefined;

/** Plays `steps` on `callee` until done and the agent hung up (or the tail ran out: the caller hangs up). */
export async function playScript(
  callee: CalleeStream,
  script: ScriptStep[],
  timing: CallerTiming = CALLER_TIMING,
  more?: LineSource,
  voiceOf?: VoiceOf,
): Promise<CallerEvent[]> {
  const steps = [...script];
  const rate = callee.protocol.format.rate as SampleRate;
  const n = rate / 50;
  const voice = (text: string) => {
    const made = voiceOf?.(text);
    const [samples, from] = made ? [made.samples, made.rate] : [callerVoice(text), VOICE_RATE as SampleRate];
    return from === rate ? samples : new Resampler(from, rate).convert(samples);
  };
  const events: CallerEvent[] = [];
  const start = Date.now();
  const log = (step: number, action: string, detail?: string) => events.push({ at_ms: callee.clockMs, step, action, ...(detail ? { detail } : {}) });

  let step = 0;
  let saying: Int16Array | null = null;
  let at = 0;
  let heardFrames = callee.received.length;
  let agentSpoke = false; // since the caller's last action
  let quietMs = 0;
  let talkingMs = 0; // how long the agent has been talking, for an interrupt
  let waitedMs = 0;
  let quietLeft = 0; // a pause or silence still to send
  let tailLeft = timing.tailMs;
  let asking = false; // the line source is deciding the next line
  let sourceDone = !more;
  let sourceError: unknown = null;
  const acted = () => {
    agentSpoke = false;
    quietMs = 0;
    talkingMs = 0;
    waitedMs = 0;
  };

  for (let t = 0; !callee.closed; t += 20) {
    const now = callee.received.length;
    const active = now > heardFrames || callee.unplayedMs > 0;
    heardFrames = now;
    if (active) {
      agentSpoke = true;
      quietMs = 0;
      talkingMs += 20;
    } else {
      quietMs += 20;
      talkingMs = 0;
    }
    waitedMs += 20;

    if (saying) {
      callee.speak(saying.subarray(at, at + n));
      at += n;
      if (at >= saying.length) {
        saying = null;
        acted();
      }
    } else if (quietLeft > 0) {
      callee.silence(20);
      quietLeft -= 20;
      if (quietLeft <= 0) acted();
    } else if (step < steps.length) {
      callee.silence(20);
      const s = steps[step];
      const agentDone = (agentSpoke && quietMs >= timing.agentDoneMs) || (!agentSpoke && waitedMs >= timing.waitAtMostMs);
      if ((s.action === "say" && agentDone) || (s.action === "interrupt" && (talkingMs >= s.after_ms || (!agentSpoke && waitedMs >= timing.waitAtMostMs)))) {
        saying = voice(s.text);
        at = 0;
        log(step, s.action, s.text);
        step++;
      } else if (s.action === "press" && agentDone) {
        callee.press(s.digits);
        log(step, "press", s.digits);
        step++;
        acted();
      } else if (s.action === "pause" || s.action === "silence") {
        quietLeft = s.ms;
        log(step, s.action, `${s.ms} ms`);
        step++;
      }
    } else if (sourceError) {
      log(step, "hangup", `the caller failed: ${String((sourceError as Error)?.message ?? sourceError)}`);
      callee.hangup();
      break;
    } else if (!sourceDone) {
      callee.silence(20);
      const agentDone = (agentSpoke && quietMs >= timing.agentDoneMs) || (!agentSpoke && waitedMs >= timing.waitAtMostMs);
      if (agentDone && !asking && more) {
        asking = true;
        more().then(
          (line) => {
            if (line === null) sourceDone = true;
            else steps.push({ action: "say", text: line });
            asking = false;
          },
          (err) => {
            sourceError = err ?? new Error("the line source failed");
            asking = false;
          },
        );
      }
    } else {
      callee.silence(20);
      tailLeft -= 20;
      if (tailLeft <= 0) {
        log(step, "hangup", "the agent had not ended the call");
        callee.hangup();
        break;
      }
    }
    // A carrier's frames go out on the wall clock: a late timer is caught up, not added to the call.
    await sleep(Math.max(0, start + t + 20 - Date.now()));
  }
  if (callee.closed) log(step, "closed", callee.closed.reason || String(callee.closed.code));
  return events;
}
