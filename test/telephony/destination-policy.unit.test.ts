// The destination policy's rules (pure): which numbers an organization may dial, and why not.
import { describe, expect, it } from "vitest";
import { callerIdCountries, checkDestination, DEFAULT_BLOCKED_TYPES, destinationOf, effectivePolicy } from "../../src/telephony/destination-policy";
import { classifyE164, parseE164 } from "../../src/telephony/numbers";

// Four numbers once dialed before the destination policy: US premium rate, UK premium rate, Inmarsat satellite, a Somali mobile.
const US_PREMIUM = "+19005550100";
const UK_PREMIUM = "+449098790000";
const INMARSAT = "+870773123456";
const SOMALIA = "+252612345678";

const ORDINARY = {
  US: "+14155550123", // fixed line or mobile (NANP does not tell them apart)
  GB_FIXED: "+442079460000",
  GB_MOBILE: "+447400123456",
  FR: "+33612345678",
  DE: "+4930123456",
  IN: "+919876543210",
  AU: "+61412345678",
};

const usOrg = effectivePolicy(null, ["+14155550100"]);

describe("classification", () => {
  it("gives each number its region and policy type", () => {
    const of = (n: string) => destinationOf(classifyE164(n)!);
    expect(of(US_PREMIUM)).toEqual({ country: "US", type: "premium_rate" });
    expect(of(UK_PREMIUM)).toEqual({ country: "GB", type: "premium_rate" });
    expect(of(INMARSAT)).toEqual({ country: null, type: "satellite" });
    expect(of(SOMALIA)).toEqual({ country: "SO", type: "mobile" });
    expect(of("+881612345678")).toEqual({ country: null, type: "satellite" }); // Iridium
    expect(of("+80012345678")).toEqual({ country: null, type: "global_service" }); // international freephone
    expect(of("+443001234567")).toEqual({ country: "GB", type: "uan" });
    expect(of("+447012345678")).toEqual({ country: "GB", type: "personal_number" });
    expect(of("+18005550100")).toEqual({ country: "US", type: "toll_free" });
    expect(of("+18765550123").country).toBe("JM"); // +1 is not one country: Jamaica shares it with the US
    expect(of(ORDINARY.US)).toEqual({ country: "US", type: "fixed_line_or_mobile" });
    expect(of(ORDINARY.GB_FIXED)).toEqual({ country: "GB", type: "fixed_line" });
    expect(of(ORDINARY.GB_MOBILE)).toEqual({ country: "GB", type: "mobile" });
    expect(of(ORDINARY.DE)).toEqual({ country: "DE", type: "fixed_line" });
  });

  it("classifies only valid, normalized E.164 numbers; checking validity is unchanged", () => {
    expect(classifyE164("1001")).toBeNull();
    expect(classifyE164("+1415555")).toBeNull();
    expect(classifyE164("+1 415 555 0123")).toBeNull();
    expect(parseE164(US_PREMIUM)).toEqual({ ok: true, value: US_PREMIUM, kind: "e164" });
    expect(parseE164("+1415555").ok).toBe(false);
    expect(parseE164("+15555550123").ok).toBe(false); // 555 is not an area code
  });
});

describe("the default policy", () => {
  it("refuses the issue's four numbers for an organization with a US caller ID", () => {
    expect(checkDestination(US_PREMIUM, usOrg)).toMatchObject({ reason: "number_type_blocked", ctx: { number_type: "premium_rate", country: "US" } });
    expect(checkDestination(UK_PREMIUM, usOrg)).toMatchObject({ reason: "number_type_blocked", ctx: { number_type: "premium_rate", country: "GB" } });
    expect(checkDestination(INMARSAT, usOrg)).toMatchObject({ reason: "number_type_blocked", ctx: { number_type: "satellite", country: null } });
    expect(checkDestination(SOMALIA, usOrg)).toMatchObject({ reason: "country_not_allowed", ctx: { country: "SO", allowed_countries: ["US"] } });
  });

  it("says why in words", () => {
    expect(checkDestination(US_PREMIUM, usOrg)!.message).toMatch(/^\+19005550100 is a premium-rate number, which this organization's calling policy refuses/);
    expect(checkDestination(INMARSAT, usOrg)!.message).toMatch(/is a satellite number/);
    expect(checkDestination(SOMALIA, usOrg)!.message).toMatch(
      /^Calls to Somalia \(SO\) are not allowed .* allowed countries are US \(by default, the countries of its caller IDs\); change it with PUT \/api\/v1\/organizations\/calling-policy$/,
    );
  });

  it("dials ordinary numbers in the countries of the caller IDs, and nowhere else", () => {
    const org = effectivePolicy(null, ["+14155550100", ORDINARY.GB_FIXED, ORDINARY.FR, "1001", "sip:alice@pbx.example"]);
    expect([...org.allowedCountries]).toEqual(["FR", "GB", "US"]);
    for (const n of [ORDINARY.US, ORDINARY.GB_FIXED, ORDINARY.GB_MOBILE, ORDINARY.FR, "+18005550100"]) expect(checkDestination(n, org), n).toBeNull();
    for (const n of [ORDINARY.DE, ORDINARY.IN, ORDINARY.AU, "+18765550123"])
      expect(checkDestination(n, org), n).toMatchObject({ reason: "country_not_allowed" });
  });

  it("refuses every country when the organization has no E.164 caller ID, and says so", () => {
    const pbxOnly = effectivePolicy(null, ["1001"]);
    const r = checkDestination(ORDINARY.US, pbxOnly);
    expect(r).toMatchObject({ reason: "country_not_allowed", ctx: { allowed_countries: [] } });
    expect(r!.message).toMatch(/allowed countries are none \(by default the countries of its caller IDs, and it has no E\.164 caller ID\)/);
  });

  it("never judges extensions, SIP URIs or dial strings", () => {
    const none = effectivePolicy({ allowedCountries: [], blockedNumberTypes: null, allowedNumbers: [] }, []);
    for (const n of ["1001", "sip:alice@pbx.example", "PJSIP/1001", "Local/100@default"]) expect(checkDestination(n, none)).toBeNull();
  });

  it("refuses the high-cost types by default and nothing ordinary", () => {
    expect([...DEFAULT_BLOCKED_TYPES].sort()).toEqual(["global_service", "pager", "personal_number", "premium_rate", "satellite", "shared_cost", "uan"]);
    expect(checkDestination("+443001234567", effectivePolicy(null, [ORDINARY.GB_FIXED]))).toMatchObject({ ctx: { number_type: "uan" } });
    expect(checkDestination("+80012345678", usOrg)).toMatchObject({ ctx: { number_type: "global_service" } });
  });
});

describe("the organization's own choices", () => {
  it("an explicit country list replaces the caller-ID default", () => {
    const p = effectivePolicy({ allowedCountries: ["SO", "DE"], blockedNumberTypes: null, allowedNumbers: [] }, ["+14155550100"]);
    expect(p.countriesSource).toBe("policy");
    expect(checkDestination(SOMALIA, p)).toBeNull();
    expect(checkDestination(ORDINARY.DE, p)).toBeNull();
    expect(checkDestination(ORDINARY.US, p)).toMatchObject({ reason: "country_not_allowed" });
    expect(checkDestination(ORDINARY.US, p)!.message).toMatch(/allowed countries are DE, SO \(its allowed_countries\)/);
  });

  it("an empty type list refuses no type; countries still apply", () => {
    const p = effectivePolicy({ allowedCountries: null, blockedNumberTypes: [], allowedNumbers: [] }, ["+14155550100"]);
    expect(checkDestination(US_PREMIUM, p)).toBeNull();
    expect(checkDestination(INMARSAT, p)).toBeNull(); // no country to judge
    expect(checkDestination(UK_PREMIUM, p)).toMatchObject({ reason: "country_not_allowed" });
  });

  it("allowed numbers pass whatever their country or type", () => {
    const p = effectivePolicy({ allowedCountries: null, blockedNumberTypes: null, allowedNumbers: [UK_PREMIUM, SOMALIA] }, ["+14155550100"]);
    expect(checkDestination(UK_PREMIUM, p)).toBeNull();
    expect(checkDestination(SOMALIA, p)).toBeNull();
    expect(checkDestination(US_PREMIUM, p)).toMatchObject({ reason: "number_type_blocked" });
  });

  it("the default countries come only from E.164 caller IDs", () => {
    expect(callerIdCountries(["+14155550100", "+12025550123", "+33612345678", "1001", "sip:x@y.z", "+870773123456"])).toEqual(["FR", "US"]);
  });
});
