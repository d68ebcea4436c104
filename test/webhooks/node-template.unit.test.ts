// A webhook node's template filled from a call's values: whole-placeholder strings keep the value's type, placeholders
// in text become text, dotted paths reach nested values, missing ones are null or empty.
import { describe, expect, it } from "vitest";
import { lookup, placeholders, renderPayload } from "../../src/webhooks/node-template";

const VALUES = { first_name: "Ada", gathered_context: { seats: 12, tags: ["a", "b"] }, transcript: [{ role: "agent", text: "Hi" }], "a.b": "dotted key" };

describe("webhook node templates", () => {
  it("fills values by type, text by text, nested paths and list indexes", () => {
    expect(
      renderPayload(
        {
          n: "{{ gathered_context.seats }}",
          t: "{{transcript}}",
          s: "Hello {{first_name}}, {{gathered_context.seats}} seats",
          first: "{{gathered_context.tags.0}}",
          k: "{{a.b}}",
          keep: 5,
          list: ["{{first_name}}", true],
        },
        VALUES,
      ),
    ).toEqual({ n: 12, t: VALUES.transcript, s: "Hello Ada, 12 seats", first: "a", k: "dotted key", keep: 5, list: ["Ada", true] });
  });

  it("a missing value is null on its own and empty inside text; objects inside text are JSON", () => {
    expect(renderPayload({ a: "{{nope}}", b: "x{{nope}}y", c: "tags: {{gathered_context.tags}}" }, VALUES)).toEqual({ a: null, b: "xy", c: 'tags: ["a","b"]' });
    expect(lookup(VALUES, "gathered_context.seats.x")).toBeUndefined();
  });

  it("lists the placeholders used", () => {
    expect(placeholders({ a: "{{x}} and {{ y.z }}", b: ["{{x}}"] })).toEqual(["x", "y.z"]);
  });
});
