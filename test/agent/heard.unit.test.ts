import { describe, expect, it } from "vitest";
import { heardWords } from "../../src/agent/heard";

const TEXT = "The conference runs for three days in Lisbon.";

describe("the heard part of a sentence cut off", () => {
  it("nothing before the audio starts, all of it once it has played", () => {
    expect(heardWords(TEXT, 0, 3000)).toBe("");
    expect(heardWords(TEXT, 3000, 3000)).toBe(TEXT);
    expect(heardWords(TEXT, 5000, 3000)).toBe(TEXT);
  });

  it("proportional to the characters played, cut at the last word heard in full", () => {
    // "The conference runs" is 19 of the text's 45 characters: heard once 19/45 of the audio has played.
    const d = 4500;
    expect(heardWords(TEXT, (19 / 45) * d - 1, d)).toBe("The conference");
    expect(heardWords(TEXT, (19 / 45) * d, d)).toBe("The conference runs");
    expect(heardWords(TEXT, d - 1, d)).toBe("The conference runs for three days in");
  });

  it("by the voice's word timings where the engine gives them", () => {
    const timings = ["The", "conference", "runs", "for", "three", "days", "in", "Lisbon"].map((word, i) => ({ word, endMs: (i + 1) * 300 }));
    expect(heardWords(TEXT, 899, 2400, timings)).toBe("The conference");
    expect(heardWords(TEXT, 900, 2400, timings)).toBe("The conference runs");
  });
});
