// The pure rules of an inbound call: why a number does not take it, numbers as carriers write them, the variables.
import { describe, expect, it } from "vitest";
import { addressCandidates, asE164, inboundVariables, refusalOf } from "../../src/calls/inbound/inbound-rules";

describe("inbound rules", () => {
  const number = { isActive: true, inboundWorkflowId: 7, label: null };
  it("refuses in order: unknown number, inactive number, inactive configuration, no agent", () => {
    expect(refusalOf({ number: null, configInactive: true })).toBe("number_unknown");
    expect(refusalOf({ number: { ...number, isActive: false }, configInactive: true })).toBe("number_inactive");
    expect(refusalOf({ number, configInactive: true })).toBe("configuration_inactive");
    expect(refusalOf({ number: { ...number, inboundWorkflowId: null }, configInactive: false })).toBe("no_agent");
    expect(refusalOf({ number, configInactive: false })).toBeNull();
  });
  it("reads carriers' numbers as E.164 where they are numbers, and leaves extensions, URIs and withheld callers alone", () => {
    expect(asE164("+14155550100")).toBe("+14155550100");
    expect(asE164("14155550100")).toBe("+14155550100");
    expect(asE164("1001")).toBe("1001");
    expect(asE164("sip:bob@pbx.example")).toBe("sip:bob@pbx.example");
    expect(asE164("anonymous")).toBe("anonymous");
    expect(addressCandidates(" 14155550100 ")).toEqual(["+14155550100", "14155550100"]);
    expect(addressCandidates("1001")).toEqual(["1001"]);
  });
  it("variables: the agent's defaults, the number's label, then caller and called numbers, which always win", () => {
    expect(inboundVariables({ first_name: "Ada", caller_number: "spoofed", nested: { a: 1 } }, "Support line", "+1", "+2")).toEqual({
      first_name: "Ada",
      number_label: "Support line",
      caller_number: "+1",
      called_number: "+2",
    });
  });
});
