// The agent's defaults for template variables (template_context_variables) and blank values: pure rules shared by
// single calls, web calls and CSV rows.
import { describe, expect, it } from "vitest";
import { blankVariables, variablesWithoutDefault, withDefaults } from "../../src/workflows/template";

describe("template defaults", () => {
  it("a default counts only when it is a scalar that is not blank", () => {
    expect(variablesWithoutDefault(["a", "b", "c", "d", "e"], { a: "x", b: "", c: " ", d: 0, e: { x: 1 } })).toEqual(["b", "c", "e"]);
    expect(variablesWithoutDefault(["a"], null)).toEqual(["a"]);
  });

  it("fills absent, null and blank values from the defaults; a call's own value wins; others are left alone", () => {
    expect(withDefaults(["a", "b", "c", "d"], { a: "", b: null, c: "own", x: 1 }, { a: "A", b: "B", c: "C" })).toEqual({ a: "A", b: "B", c: "own", x: 1 });
    // Case-insensitive like rendering: the CSV header's First_Name is the value of {{first_name}}.
    expect(withDefaults(["first_name"], { First_Name: "Ada" }, { first_name: "there" })).toEqual({ First_Name: "Ada" });
  });

  it("tells missing from empty", () => {
    expect(blankVariables(["a", "b", "c", "d"], { a: "", b: "  ", c: "x", e: null })).toEqual({ missing: ["d"], empty: ["a", "b"] });
  });
});
