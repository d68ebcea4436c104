// The voice agent's pure parts on their own: the turn detector (frames in, an utterance's start and end out), the
// idle policy (what to do when nothing happens, by the wall clock) and the wait for an answering machine's tone.
import { describe, expect, it } from "vitest";
import { IdlePolicy } from "../../src/agent/idle-policy";
import { MachineWait } from "../../src/agent/machine-wait";
import { TurnDetector } from "../../src/agent/turn-detector";
import { DEFAULT_TURN_SETTINGS as S } from "../../src/agent/turn-settings";

const frame = (v: number) => new Int16Array(160).fill(v);

describe("the turn detector", () => {
  it("an utterance starts with a voiced frame and ends after endOfTurnMs of quiet, with its audio and times", () => {
    const d = new TurnDetector(100);
    expect(d.push(frame(0), 20, false)).toBeNull();
    expect(d.push(frame(1), 40, true)).toEqual({ kind: "start" });
    expect(d.push(frame(2), 60, true)).toBeNull();
    expect(d.active).toBe(true);
    for (let t = 80; t < 160; t += 20) expect(d.push(frame(0), t, false)).toBeNull();
    const end = d.push(frame(0), 160, false);
    expect(end).toMatchObject({ kind: "end", utterance: { startMs: 40, endMs: 60, voicedMs: 40 } });
    expect(end?.kind === "end" && end.utterance.samples.length).toBe(160 * 7);
    expect(d.active).toBe(false);
  });

  it("a turn carried back (the callee went on talking) opens the next utterance with its audio", () => {
    const d = new TurnDetector(100);
    expect(d.carry({ samples: frame(5), startMs: 40, endMs: 60, voicedMs: 20 })).toBe(true);
    expect(d.push(frame(1), 300, true)).toBeNull();
    for (let t = 320; t < 400; t += 20) expect(d.push(frame(0), t, false)).toBeNull();
    const end = d.push(frame(0), 400, false);
    expect(end).toMatchObject({ kind: "end", utterance: { startMs: 40, voicedMs: 40 } });
  });
});

describe("the idle policy", () => {
  it("re-prompts a silent callee after repromptAfterMs, then says goodbye after another", () => {
    const p = new IdlePolicy(S);
    const quiet = { speaking: false, thinking: false };
    expect(p.tick(S.repromptAfterMs - 1, quiet)).toBeNull();
    expect(p.tick(S.repromptAfterMs, quiet)).toBe("reprompt");
    expect(p.tick(2 * S.repromptAfterMs - 1, quiet)).toBeNull();
    expect(p.tick(2 * S.repromptAfterMs, quiet)).toBe("goodbye");
  });

  it("a slow reply gets one filler, and a reply that never comes is dead air at maxWaitMs", () => {
    const p = new IdlePolicy(S);
    p.awaitReply(1000);
    const thinking = { speaking: false, thinking: true };
    expect(p.tick(1000 + S.fillerAfterMs - 1, thinking)).toBeNull();
    expect(p.tick(1000 + S.fillerAfterMs, thinking)).toBe("filler");
    expect(p.tick(1000 + S.fillerAfterMs + 100, thinking)).toBeNull();
    expect(p.tick(1000 + S.maxWaitMs, { speaking: true, thinking: true })).toBe("dead_air");
    expect(p.tick(1000 + S.maxWaitMs + 1, { speaking: true, thinking: true })).toBeNull();
  });

  it("nothing while the agent speaks or thinks", () => {
    const p = new IdlePolicy(S);
    expect(p.tick(10 * S.repromptAfterMs, { speaking: true, thinking: false })).toBeNull();
    expect(p.tick(10 * S.repromptAfterMs, { speaking: false, thinking: true })).toBeNull();
  });
});

describe("waiting out an answering machine", () => {
  it("leaves the message once after afterToneMs of quiet; hangs up on a machine that talks past maxMachineMs", () => {
    const w = new MachineWait(0, S);
    expect(w.push(500, true)).toBeNull();
    expect(w.push(500 + S.afterToneMs - 20, false)).toBeNull();
    expect(w.push(500 + S.afterToneMs, false)).toBe("leave");
    expect(w.push(500 + S.afterToneMs + 20, false)).toBeNull();
    const talking = new MachineWait(0, S);
    expect(talking.push(S.maxMachineMs - 20, true)).toBeNull();
    expect(talking.push(S.maxMachineMs, true)).toBe("hang_up");
  });
});
