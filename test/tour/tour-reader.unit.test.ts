// How the README's tour is read and judged: the shell blocks between the markers, their `# →` lines, and an output
// line that must appear as shown.
import { describe, expect, it } from "vitest";
import { missingLines, tourBlocks } from "../../scripts/lib/tour";

const README = [
  "intro",
  "```sh",
  "echo no",
  "```",
  "<!-- tour:start -->",
  "```sh",
  "echo hi",
  "# → hi",
  "```",
  "text",
  "```sh",
  "X=1",
  "```",
  "<!-- tour:end -->",
].join("\n");

describe("the tour reader", () => {
  it("takes only the blocks between the markers, with the lines each shows", () => {
    expect(tourBlocks(README)).toEqual([
      { script: "echo hi\n# → hi\n", expected: ["hi"] },
      { script: "X=1\n", expected: [] },
    ]);
    expect(() => tourBlocks("no markers")).toThrow(/no tour markers/);
  });

  it("finds a shown line only as a whole line of the output", () => {
    expect(missingLines("a\n  hi  \nb", ["hi"])).toEqual([]);
    expect(missingLines("his\nb", ["hi", "b"])).toEqual(["hi"]);
  });
});
