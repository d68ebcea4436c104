// Template variables: extraction from prompts and greetings, rendering with an initial_context.
import { describe, expect, it } from "vitest";
import { extractVariables, renderTemplate, startGreeting, templateVariables } from "../../src/workflows/template";
import { validDefinition } from "./fixtures";

describe("extractVariables", () => {
  it("finds plain, spaced, repeated and nested variables once each, in order", () => {
    const value = {
      a: "Hi {{name}}, your order {{ order_id }} ships {{  date\t}}. Bye {{name}}.",
      nested: { deeper: [{ text: "{{ city }} and {{name}}" }, "{{country.code}}"] },
      count: 3,
      flag: true,
      nothing: null,
    };
    expect(extractVariables(value)).toEqual(["name", "order_id", "date", "city", "country.code"]);
  });

  it("ignores text that is not a variable", () => {
    expect(extractVariables("{name} {{}} {{ 1abc }} {{a b}} {{ name | upper }} {{{x}")).toEqual([]);
    expect(extractVariables("{{{x}}}")).toEqual(["x"]);
  });
});

describe("templateVariables", () => {
  it("collects the variables of prompts and greetings of every node", () => {
    expect(templateVariables(validDefinition())).toEqual(["first_name", "topic", "company"]);
  });

  it("looks into nested prompt objects but not other fields", () => {
    const def = {
      nodes: [
        { id: "s", type: "startCall", data: { prompt: "{{a}}", greeting: "{{ b }}", url: "https://x/{{not_me}}" } },
        { id: "n", type: "agentNode", data: { prompt: "{{a}} {{c}}", extraction: { extraction_prompt: "{{d}}", other: "{{nope}}" } } },
        { id: "g", type: "globalNode", data: { prompts: [{ text: "{{e}}" }] } },
      ],
      edges: [{ id: "x", source: "s", target: "n", data: { condition: "{{edge_var}}" } }],
    };
    expect(templateVariables(def)).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("is total over garbage", () => {
    expect(templateVariables(null)).toEqual([]);
    expect(templateVariables({ nodes: "x" })).toEqual([]);
    expect(templateVariables({ nodes: [null, 1, { data: "str" }] })).toEqual([]);
  });
});

describe("startGreeting", () => {
  it("is the startCall node's greeting", () => {
    expect(startGreeting(validDefinition())).toBe("Hello {{first_name}}!");
  });
  it("is null without one", () => {
    const d = validDefinition();
    delete d.nodes[0].data.greeting;
    expect(startGreeting(d)).toBeNull();
    expect(startGreeting({ nodes: [{ type: "startCall", data: { greeting: "  " } }] })).toBeNull();
    expect(startGreeting(42)).toBeNull();
  });
});

describe("renderTemplate", () => {
  it("fills variables, spaced or not, and reports none missing", () => {
    expect(renderTemplate("Hi {{name}} from {{ city }}!", { name: "Ada", city: "London" })).toEqual({ text: "Hi Ada from London!", missing: [] });
  });

  it("renders a missing variable as empty and reports it once", () => {
    expect(renderTemplate("{{a}}-{{ b }}-{{a}}", { b: "B" })).toEqual({ text: "-B-", missing: ["a"] });
    expect(renderTemplate("{{x}}", null)).toEqual({ text: "", missing: ["x"] });
    expect(renderTemplate("{{x}}", { x: null })).toEqual({ text: "", missing: ["x"] });
  });

  it("matches names case-insensitively and follows dotted paths", () => {
    expect(renderTemplate("{{First_Name}} {{customer.tier}}", { first_name: "Lin", customer: { tier: "gold" } }).text).toBe("Lin gold");
    expect(renderTemplate("{{a.b}}", { "a.b": "flat wins" }).text).toBe("flat wins");
  });

  it("renders non-text values as JSON and leaves other text alone", () => {
    expect(renderTemplate("{{n}} {{ok}} {{list}} {single}", { n: 3, ok: false, list: [1, 2] }).text).toBe("3 false [1,2] {single}");
  });

  it("does not read inherited properties", () => {
    expect(renderTemplate("{{constructor}}{{toString}}", {})).toEqual({ text: "", missing: ["constructor", "toString"] });
  });
});
