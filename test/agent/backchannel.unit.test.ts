import { describe, expect, it } from "vitest";
import { isBackchannel, stopsAgent, WORDS_WAIT_MS } from "../../src/agent/backchannel";

describe("a backchannel is not an interruption", () => {
  it.each(["", "Uh-huh.", "yeah", "Okay.", "mm-hmm", "Yeah, okay.", "I see.", "Got it"])("%j lets the agent go on", (t) => expect(isBackchannel(t)).toBe(true));
  it.each(["Wait, stop.", "No.", "We need twelve seats.", "yeah but how much", "okay okay okay okay"])("%j takes the turn", (t) =>
    expect(isBackchannel(t)).toBe(false),
  );
});

describe("stopsAgent: when the callee's voice over the agent stops it", () => {
  it("never under the minimum; past it, voice alone without live words", () => {
    expect(stopsAgent(280, 300, undefined)).toBe(false);
    expect(stopsAgent(300, 300, undefined)).toBe(true);
  });

  it("with live words: a backchannel never stops it, other words do; no words yet wait WORDS_WAIT_MS more", () => {
    expect(stopsAgent(900, 300, "Uh-huh")).toBe(false);
    expect(stopsAgent(900, 300, "okay yeah")).toBe(false);
    expect(stopsAgent(320, 300, "Wait")).toBe(true);
    expect(stopsAgent(320, 300, "")).toBe(false);
    expect(stopsAgent(300 + WORDS_WAIT_MS - 20, 300, "")).toBe(false);
    expect(stopsAgent(300 + WORDS_WAIT_MS, 300, "")).toBe(true);
  });
});
