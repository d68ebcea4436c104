// TurnDetector: where an utterance ends on the call's audio clock. Frames come with the time they end (the session
// ticks its clock, then hands the frame over), so the last voiced frame's time is the end of the caller's voice;
// a turn a model ended (Flux's EndOfTurn, smart-turn's verdict) ends there too, as one the silence bound ended does,
// and the turn's timing (docs/turn-timing.md) counts from it.
import { describe, expect, it } from "vitest";
import { TurnDetector } from "../../src/agent/turn-detector";

const FRAME = new Int16Array(160);

/** `voicedMs` of voice from clock 0, then `quietMs` of quiet; each frame pushed with the time it ends. */
function speak(turns: TurnDetector, voicedMs: number, quietMs: number) {
  let clock = 0;
  let end = null;
  for (let t = 0; t < voicedMs + quietMs && !end; t += 20) {
    clock += 20;
    const ev = turns.push(FRAME, clock, t < voicedMs);
    if (ev?.kind === "end") end = ev.utterance;
  }
  return { clock, end };
}

describe("TurnDetector: the end of the caller's utterance", () => {
  it("ended by the silence bound: with the last voiced frame", () => {
    const { end } = speak(new TurnDetector(700), 600, 700);
    expect(end?.endMs).toBe(600);
    expect(end?.voicedMs).toBe(600);
  });

  it("ended by a model at a pause: with the last voiced frame too, not a frame later", () => {
    const turns = new TurnDetector(700);
    const { clock, end } = speak(turns, 600, 200);
    expect(end).toBeNull();
    const u = turns.endNow(clock);
    expect(u?.endMs).toBe(600);
    expect(u?.startMs).toBe(20);
    expect(turns.active).toBe(false);
  });

  it("ended by a model while the caller's frame is the last voiced one: at that frame's end", () => {
    const turns = new TurnDetector(700);
    const { clock } = speak(turns, 400, 0);
    expect(turns.endNow(clock)?.endMs).toBe(400);
  });
});
