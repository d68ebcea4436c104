import { describe, expect, it } from "vitest";
import { isBackchannel } from "../../src/agent/backchannel";

describe("a backchannel is not an interruption", () => {
  it.each(["", "Uh-huh.", "yeah", "Okay.", "mm-hmm", "Yeah, okay.", "I see.", "Got it"])("%j lets the agent go on", (t) => expect(isBackchannel(t)).toBe(true));
  it.each(["Wait, stop.", "No.", "We need twelve seats.", "yeah but how much", "okay okay okay okay"])("%j takes the turn", (t) =>
    expect(isBackchannel(t)).toBe(false),
  );
});
