// A PBX destination's number, extracted whatever the form it is written in, and judged by the carriers' policy.
import { describe, expect, it } from "vitest";
import { effectivePolicy } from "../../src/telephony/destination-policy";
import { checkPbxDestination, pbxNumber, pbxTemplates } from "../../src/telephony/pbx-destinations";

const T = ["PJSIP/{number}", "Local/{number}@from-internal"];
const usOnly = effectivePolicy(null, ["+14155550100"]);

describe("pbxNumber", () => {
  it("reads extensions as internal, E.164 as itself, and digits after 00 or 011 as E.164", () => {
    expect(pbxNumber("1001", T)).toEqual({ internal: true });
    expect(pbxNumber("123456", T)).toEqual({ internal: true });
    expect(pbxNumber("+442079460000", T)).toEqual({ internal: false, e164: "+442079460000" });
    expect(pbxNumber("011442079460000", T)).toEqual({ internal: false, e164: "+442079460000" });
    expect(pbxNumber("00442079460000", T)).toEqual({ internal: false, e164: "+442079460000" });
  });

  it("refuses a number longer than an extension that has no country", () => {
    expect(pbxNumber("4155550123", T)).toMatchObject({ refusal: { reason: "number_not_classifiable" } });
  });

  it("takes the number out of a dial string of an allowed form (technology and context in any case), else refuses it", () => {
    expect(pbxNumber("PJSIP/+442079460000", T)).toEqual({ internal: false, e164: "+442079460000" });
    expect(pbxNumber("local/0114420794600@FROM-INTERNAL", T)).toEqual({ internal: false, e164: "+4420794600" });
    expect(pbxNumber("Local/100@from-internal", T)).toEqual({ internal: true });
    for (const d of ["PJSIP/+442079460000@other-trunk", "Local/100@any-context", "SIP/trunk/555", "PJSIP/alice"])
      expect(pbxNumber(d, T), d).toMatchObject({ refusal: { reason: "dial_string_not_allowed", ctx: { allowed: T } } });
  });

  it("judges the user of a SIP URI when it is a number", () => {
    expect(pbxNumber("sip:alice@pbx.example", T)).toEqual({ internal: true });
    expect(pbxNumber("sip:+442079460000@gw.example", T)).toEqual({ internal: false, e164: "+442079460000" });
  });
});

describe("checkPbxDestination", () => {
  it("applies the carriers' policy to the extracted number; allowed_numbers pass", () => {
    expect(checkPbxDestination("011442079460000", T, usOnly)).toMatchObject({ reason: "country_not_allowed", ctx: { country: "GB" } });
    expect(checkPbxDestination("PJSIP/+19005550100", T, usOnly)).toMatchObject({ reason: "number_type_blocked", ctx: { number_type: "premium_rate" } });
    expect(checkPbxDestination("Local/+14155550123@from-internal", T, usOnly)).toBeNull();
    expect(checkPbxDestination("1001", T, usOnly)).toBeNull();
    const listed = effectivePolicy({ allowedCountries: ["US"], blockedNumberTypes: null, allowedNumbers: ["+442079460000"] }, []);
    expect(checkPbxDestination("00442079460000", T, listed)).toBeNull();
  });
});

describe("pbxTemplates", () => {
  it("is the configuration's template (PJSIP/{number} by default) and its allowed_dial_strings", () => {
    expect(pbxTemplates(null)).toEqual(["PJSIP/{number}"]);
    expect(pbxTemplates({ dial_string_template: "Local/{number}@x", allowed_dial_strings: ["PJSIP/{number}@b", 7] })).toEqual([
      "Local/{number}@x",
      "PJSIP/{number}@b",
    ]);
  });
});
