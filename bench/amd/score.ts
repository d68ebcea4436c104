// One answer through answering-machine detection as a call hears it: 20 ms frames with the call's energy gate, words
// as a streaming speech engine gives them (each word ~300 ms after it was said, spread over its sentence), then, on a
// machine, the wait for its beep (src/agent/machine-wait.ts) and when the message would start.
import { type AmdDecision, AmdClassifier } from "../../src/agent/amd/classifier";
import { MachineWait } from "../../src/agent/machine-wait";
import { DEFAULT_TURN_SETTINGS } from "../../src/agent/turn-settings";
import { isVoiced } from "../../src/lib/audio/level";
import type { Span } from "./set";

export { plan, render, decode, to8k, ulawWav, type Label, type Span } from "./set";
export { readWav } from "../../src/lib/audio/wav";

const FRAME = 160; // 20 ms at 8 kHz
const WORD_LAG_MS = 300;

export type Scored = { decision: AmdDecision; messageAtMs: number | null };

/** `words`: feed the words (a streaming engine's interim results); without, the audio alone decides. */
export function score(answer: Int16Array, spans: Span[], words: boolean): Scored {
  // The line stays open (quiet) after the answer's audio: what is undecided by then is decided on the quiet.
  const pcm = new Int16Array(Math.max(answer.length, 12 * 8000));
  pcm.set(answer);
  const amd = new AmdClassifier(0, 8000);
  const timed = words
    ? spans.flatMap((s) => {
        const w = s.text.split(/\s+/);
        return w.map((_, i) => ({ atMs: s.startMs + ((i + 1) / w.length) * (s.endMs - s.startMs) + WORD_LAG_MS, upTo: { s, i } }));
      })
    : [];
  let said: string[] = [];
  let wi = 0;
  let decision: AmdDecision | null = null;
  let wait: MachineWait | null = null;
  let messageAtMs: number | null = null;
  for (let from = 0; from + FRAME <= pcm.length; from += FRAME) {
    const samples = pcm.subarray(from, from + FRAME);
    const atMs = (from / 8000) * 1000;
    const voiced = isVoiced(samples);
    if (!decision) {
      decision = amd.frame({ samples, atMs, voiced });
      while (!decision && wi < timed.length && timed[wi].atMs <= atMs + 20) {
        const { s, i } = timed[wi++].upTo;
        said = [...spans.slice(0, spans.indexOf(s)).map((x) => x.text), ...s.text.split(/\s+/).slice(0, i + 1)];
        decision = amd.words(said.join(" "), atMs + 20);
      }
      if (decision && (decision.cls === "machine_greeting" || decision.cls === "beep")) {
        wait = new MachineWait(decision.atMs, DEFAULT_TURN_SETTINGS, 8000);
        const t = decision.evidence.tones.at(-1);
        if (t && decision.reason.includes("beep")) wait.beeped({ ...t, share: 1 });
      }
      if (decision) continue;
    }
    if (wait && messageAtMs === null) {
      const next = wait.push(atMs, voiced, samples);
      if (next === "leave") messageAtMs = atMs + 20; // the frame arrived at its end; the message's first audio goes then
      if (next === "hang_up") break;
    }
  }
  if (!decision) throw new Error("undecided after 12 s");
  return { decision, messageAtMs };
}
